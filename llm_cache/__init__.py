"""The only door to any model: request records, the content-hashed cache, backends.

Backends import their SDKs lazily, so importing this package needs none of them.
"""
