"""The only door to any model: request records, the content-hashed cache, backends.

Backends import their SDKs lazily, so importing this package needs none of them.
"""

__all__ = ["access", "accounting", "backends", "batch", "batch_journal", "batch_records",
           "cache_commands", "cli", "client", "credentials", "errors", "event_loop", "gates",
           "key", "misses", "model_spec", "modes", "prices", "providers", "reader", "records",
           "retry", "spec", "store", "testing"]
