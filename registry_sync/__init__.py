"""Keep a Confluent-compatible Schema Registry in step with the contracts.

- :mod:`registry_sync.client` — the connection (Confluent's client, auth, TLS, retries);
- :mod:`registry_sync.naming` — subject naming strategies, :func:`subject_for`;
- :mod:`registry_sync.desired` — contracts to subjects, the identity metadata;
- :mod:`registry_sync.sync` — plan / push / pull;
- :mod:`registry_sync.baseline` — the registry as the baseline of ``check``;
- :mod:`registry_sync.wire` — the Confluent wire format (magic byte, schema id).
"""
