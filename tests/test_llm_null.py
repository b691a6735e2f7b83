"""The model seam's package: the protocol, ``NullLLM``, its errors, and lazy backends.

The core install is memvara and numpy. ``import memvara.llm`` must not import a model SDK
(or the HTTP stack under one); naming a backend imports its module only, and building one
imports its SDK.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from collections.abc import Sequence

import pytest

import memvara.llm
from memvara import (
    Cardinality,
    Claim,
    Episode,
    InvalidArgumentError,
    MemvaraError,
    PredicateSpec,
    Volatility,
)
from memvara.llm import LLM, DegradedExtractionWarning, LLMError, NullLLM

OPTIONAL = ("anthropic", "openai", "httpx", "httpx2", "httpcore", "httpcore2", "pydantic")


def test_null_llm_extracts_nothing() -> None:
    llm = NullLLM()
    assert llm.extract([Episode("I live in Lisbon", id="e1")]) == []
    assert llm.extract([]) == []
    assert llm.is_null is True and NullLLM.is_null is True
    assert repr(llm) == "NullLLM()"


def test_null_llm_classifies_every_predicate_as_the_unknown_default() -> None:
    spec = NullLLM().classify_predicate("Billing Address")
    assert spec == PredicateSpec("billing_address", Cardinality.MANY, Volatility.SLOW)
    with pytest.raises(InvalidArgumentError):
        NullLLM().classify_predicate(" _ ")


class OwnModel:
    """A user's own model: the two protocol methods, nothing else."""

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        return [Claim("user", "lives_in", t.content, sources=(t.id,)) for t in turns]

    def classify_predicate(self, name: str) -> PredicateSpec:
        return PredicateSpec(name, Cardinality.ONE)


class HalfModel:
    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        return []


def test_the_protocol_is_the_two_methods() -> None:
    assert isinstance(NullLLM(), LLM)
    assert isinstance(OwnModel(), LLM)
    assert not isinstance(HalfModel(), LLM)
    assert not isinstance(object(), LLM)
    assert not hasattr(LLM, "resolve_entity")  # opt-in, outside the protocol
    model: LLM = OwnModel()
    assert model.extract([Episode("Oslo", id="e")])[0].sources == ("e",)
    assert getattr(model, "is_null", False) is False


def test_llm_error_is_a_memvara_error_with_a_code() -> None:
    assert issubclass(LLMError, MemvaraError)
    assert LLMError.code == "llm_error"
    assert LLMError.__doc__ and DegradedExtractionWarning.__doc__
    assert issubclass(DegradedExtractionWarning, UserWarning)
    with pytest.warns(DegradedExtractionWarning):
        warnings.warn("no model", DegradedExtractionWarning, stacklevel=1)


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert memvara.llm.__all__ == sorted(memvara.llm.__all__)
    assert set(memvara.llm.__all__) == {
        "AnthropicLLM", "DegradedExtractionWarning", "ExtractionPendingError", "LLM", "LLMError",
        "NullLLM", "OpenAILLM",
    }
    for name in memvara.llm.__all__:
        assert getattr(memvara.llm, name).__name__ == name
    assert set(memvara.llm.__all__) <= set(dir(memvara.llm))


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'GeminiLLM'"):
        memvara.llm.GeminiLLM  # noqa: B018


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_importing_memvara_or_naming_a_backend_imports_no_model_sdk() -> None:
    out = run_python(f"""
        import sys
        import memvara
        import memvara.llm
        from memvara.llm import LLM, NullLLM, LLMError, DegradedExtractionWarning
        NullLLM().extract([])
        def optional():
            return sorted({{m.split(".")[0] for m in sys.modules}} & set({OPTIONAL!r}))
        print(optional(), *("memvara.llm." + m in sys.modules for m in ("anthropic", "openai")))
        anthropic_llm = memvara.llm.AnthropicLLM
        from memvara.llm import OpenAILLM
        print(optional(), anthropic_llm.__module__, OpenAILLM.__module__)
    """)
    assert out.splitlines() == [
        "[] False False",
        "[] memvara.llm.anthropic memvara.llm.openai",
    ]


def test_building_a_backend_is_what_imports_its_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the SDK made unimportable, naming the class still works and building it fails
    with the install hint: the import happens at construction, not before."""
    for extra in ("anthropic", "openai"):
        monkeypatch.setitem(sys.modules, extra, None)  # `import <extra>` now raises
    backends = (memvara.llm.AnthropicLLM, memvara.llm.OpenAILLM)
    for cls, extra in zip(backends, ("anthropic", "openai")):
        assert cls.__name__.lower().startswith(extra)
        with pytest.raises(ImportError, match=rf"pip install 'memvara\[{extra}\]'"):
            cls(api_key="k")
