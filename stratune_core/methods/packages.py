"""The third-party packages a method's steps run through, beyond StraTune's own dependencies.

A run records their versions in its manifest and `replay` compares them with the installed
ones: a new release may choose other candidates or parse a reply otherwise from the same cached
replies, so a replay that fails after an upgrade should say which package moved.
"""

from __future__ import annotations

from stratune_core.records.method_spec import Generator, GepaMethod, MethodSpec, StraTuneMethod

GEPA = "gepa"  # GEPA's optimize loop (--method gepa) and its proposal step (--generator gepa)


def method_packages(method: MethodSpec) -> tuple[str, ...]:
    if isinstance(method, GepaMethod):
        return (GEPA,)
    if isinstance(method, StraTuneMethod) and method.generator is Generator.GEPA:
        return (GEPA,)
    return ()
