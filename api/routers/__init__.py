"""The contract API's routers, one module per resource."""
