"""Run the embedded registry alone: ``python -m api.registry --port 8081 --db registry.db``."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m api.registry",
        description="Serve the embedded Confluent-compatible Schema Registry (Avro).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--db", default=".cdc-contracts/registry.db", help="SQLite file")
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("--access-log", action="store_true", help="log every request")
    args = parser.parse_args(argv)

    import uvicorn

    from api.registry.app import create_registry_app

    uvicorn.run(
        create_registry_app(args.db),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
    )


if __name__ == "__main__":
    main()
