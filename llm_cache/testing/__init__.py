"""Test doubles of the model layer: a local server speaking the Anthropic Messages API
(`fake_server`), its Message Batches endpoints (`fake_batches`) and the replies and refusals
it makes (`fake_replies`). Used by tests, benchmarks and the scripted example; the product's
run path never imports this package (tests/test_layers.py)."""

__all__ = ["fake_batches", "fake_http", "fake_replies", "fake_server"]
