"""The embedded, Confluent-compatible Schema Registry (Avro), stored in SQLite.

- :class:`api.registry.store.RegistryStore` — the state and its semantics;
- :func:`api.registry.router.create_registry_router` — the REST API as a FastAPI router;
- :func:`api.registry.app.create_registry_app` — the registry alone as an app
  (``python -m api.registry --port 8081 --db registry.db``).
"""
