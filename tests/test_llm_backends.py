"""The model backends against their real SDKs, over a fake HTTP transport.

Each test builds the vendor's own client (``anthropic.Anthropic``, ``openai.OpenAI``) on an
``httpx2.MockTransport`` that records what the SDK sent and answers with a canned API
response, so the request shape, the response parsing and the SDK's error types are the
real ones. No network, no key, no retries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

import anthropic
import httpx2
import openai

from memvara import (
    Cardinality,
    Claim,
    Episode,
    ExtractionPendingError,
    InvalidArgumentError,
    Memvara,
    PredicateSpec,
    Volatility,
)
from memvara.llm import LLM, AnthropicLLM, LLMError, OpenAILLM, _prompts
from memvara.llm._chat import ChatLLM

Answer = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]

TURNS = (
    Episode("I moved to Lisbon last spring", id="ep-1"),
    Episode("Great, how is it?", role="assistant", id="ep-2"),
    Episode("Lovely. I work at Kovac Labs now and I don't drink coffee any more", id="ep-3"),
)
REPLY = {
    "claims": [
        {"subject": "user", "predicate": "Lives In", "object": "Lisbon", "turn": 0,
         "valid_from": "2025-04", "confidence": 0.9},
        {"subject": "user", "predicate": "works_at", "object": "Kovac Labs", "turn": 2},
        {"subject": "user", "predicate": "likes", "object": "coffee", "turn": 2, "polarity": -1},
        {"subject": "user", "predicate": "likes", "object": "", "turn": 2},
    ]
}
EXPECTED = [
    ("user", "lives_in", "Lisbon", 1, 0.9, ("ep-1",), datetime(2025, 4, 1, tzinfo=timezone.utc)),
    ("user", "works_at", "Kovac Labs", 1, 0.8, ("ep-3",), None),
    ("user", "likes", "coffee", -1, 0.8, ("ep-3",), None),
]


def summary(claims: list[Claim]) -> list[tuple[object, ...]]:
    return [
        (c.subject, c.predicate, c.object, c.polarity, c.confidence, c.sources, c.valid_from)
        for c in claims
    ]


class FakeAPI:
    """One vendor's HTTP API: answers queued per request, requests kept for inspection."""

    def __init__(self, vendor: str) -> None:
        self.vendor = vendor
        self.requests: list[httpx2.Request] = []
        self.answers: list[Answer] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.answers:
            return httpx2.Response(500, json={"error": {"message": "no answer queued"}})
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer

    def reply(self, text: str, *, truncated: bool = False) -> None:
        """Queue a successful completion whose text is ``text``."""
        if self.vendor == "anthropic":
            self.answers.append(anthropic_message([{"type": "text", "text": text}],
                                                  "max_tokens" if truncated else "end_turn"))
        else:
            message = {"role": "assistant", "content": text, "refusal": None}
            self.answers.append(openai_completion(message, "length" if truncated else "stop"))

    def refusal(self) -> None:
        if self.vendor == "anthropic":
            self.answers.append(anthropic_message([], "refusal"))
        else:
            message = {"role": "assistant", "content": None, "refusal": "I can't help."}
            self.answers.append(openai_completion(message, "stop"))

    def body(self, index: int = -1) -> dict[str, object]:
        body = json.loads(self.requests[index].content)
        assert isinstance(body, dict)
        return body

    def prompts(self, index: int = -1) -> tuple[str, str]:
        """The system prompt and the user prompt of one request."""
        body = self.body(index)
        messages = body["messages"]
        assert isinstance(messages, list)
        if self.vendor == "anthropic":
            [user] = messages
            system = body["system"]
        else:
            [sys_message, user] = messages
            assert sys_message["role"] == "system"
            system = sys_message["content"]
        assert user["role"] == "user" and isinstance(system, str)
        return system, user["content"]


def anthropic_message(content: list[dict[str, object]], stop_reason: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-5",
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    })


def openai_completion(message: Mapping[str, object], finish_reason: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4.1",
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
    })


def build(vendor: str, api: FakeAPI, **settings: object) -> ChatLLM:
    http = httpx2.Client(transport=httpx2.MockTransport(api.handle))
    if vendor == "anthropic":
        return AnthropicLLM(
            client=anthropic.Anthropic(api_key="test-key", http_client=http, max_retries=0),
            **settings,  # type: ignore[arg-type]
        )
    return OpenAILLM(
        client=openai.OpenAI(api_key="test-key", http_client=http, max_retries=0),
        **settings,  # type: ignore[arg-type]
    )


def close(llm: ChatLLM) -> None:
    assert isinstance(llm, (AnthropicLLM, OpenAILLM))
    llm.client.close()


@pytest.fixture(params=["anthropic", "openai"])
def vendor(request: pytest.FixtureRequest) -> str:
    value = request.param
    assert isinstance(value, str)
    return value


@pytest.fixture
def api(vendor: str) -> FakeAPI:
    return FakeAPI(vendor)


@pytest.fixture
def llm(vendor: str, api: FakeAPI) -> Iterator[ChatLLM]:
    backend = build(vendor, api)
    yield backend
    close(backend)


# -- extraction --------------------------------------------------------------------------


def test_one_call_extracts_every_turn(vendor: str, api: FakeAPI, llm: ChatLLM) -> None:
    api.reply(json.dumps(REPLY))
    claims = llm.extract(TURNS)

    assert len(api.requests) == 1 and llm.calls == 1
    request = api.requests[0]
    assert request.method == "POST"
    assert request.url.path == ("/v1/messages" if vendor == "anthropic" else "/v1/chat/completions")
    body = api.body()
    assert body["model"] == ("claude-opus-5" if vendor == "anthropic" else "gpt-4.1")
    system, prompt = api.prompts()
    assert system == _prompts.EXTRACTION_SYSTEM
    assert prompt == _prompts.extraction_prompt(TURNS)
    for index, turn in enumerate(TURNS):
        line = json.loads(prompt.splitlines()[index])
        assert (line["turn"], line["role"], line["text"]) == (index, turn.role, turn.content)

    assert summary(claims) == EXPECTED
    assert all(c.extractor == llm.extractor for c in claims)
    assert llm.last_rejected == ["claims[3].object: empty"]


def test_the_request_carries_the_vendor_options(vendor: str, api: FakeAPI, llm: ChatLLM) -> None:
    api.reply('{"claims": []}')
    llm.extract(TURNS[:1])
    body = api.body()
    if vendor == "anthropic":
        assert body["max_tokens"] == 4096
        assert "response_format" not in body
    else:
        assert body["max_completion_tokens"] == 4096
        assert body["response_format"] == {"type": "json_object"}
    headers = api.requests[0].headers  # the SDK authenticates; which header is its choice
    assert "test-key" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_no_turns_no_call(api: FakeAPI, llm: ChatLLM) -> None:
    llm.last_rejected = ["stale"]
    assert llm.extract([]) == []
    assert api.requests == [] and llm.calls == 0 and llm.last_rejected == []


def test_turns_without_ids_are_refused_before_any_call(api: FakeAPI, llm: ChatLLM) -> None:
    with pytest.raises(InvalidArgumentError, match=r"turns\[1\]: has no id"):
        llm.extract([Episode("a", id="e"), Episode("b")])
    with pytest.raises(InvalidArgumentError, match="turns"):
        llm.extract("I live in Lisbon")  # type: ignore[arg-type]
    assert api.requests == [] and llm.calls == 0


def test_a_fenced_reply_is_read(api: FakeAPI, llm: ChatLLM) -> None:
    api.reply("Here you go:\n```json\n" + json.dumps(REPLY) + "\n```")
    assert summary(llm.extract(TURNS)) == EXPECTED


def test_a_reply_that_is_not_json_fails_the_call_and_says_why(api: FakeAPI, llm: ChatLLM) -> None:
    """Nothing was read from the turns: add() keeps them waiting for a retry."""
    api.reply("I'm sorry, I can only answer in prose.")
    with pytest.raises(LLMError, match=r"reply was unusable \(reply: not JSON"):
        llm.extract(TURNS)
    [problem] = llm.last_rejected
    assert problem.startswith("reply: not JSON")
    api.reply('{"facts": []}')
    with pytest.raises(LLMError, match=r"unusable \(payload\.claims: missing\)"):
        llm.extract(TURNS)
    assert llm.last_rejected == ["payload.claims: missing"]
    api.reply(json.dumps(REPLY))
    assert len(llm.extract(TURNS)) == 3 and llm.last_rejected == ["claims[3].object: empty"]
    assert llm.calls == 3


def test_a_reply_cut_off_at_the_token_limit_says_so(api: FakeAPI, llm: ChatLLM) -> None:
    api.reply('{"claims": [{"subject": "user", "predic', truncated=True)
    with pytest.raises(LLMError, match="cut off at max_tokens=4096"):
        llm.extract(TURNS)
    [problem] = llm.last_rejected
    assert problem.startswith("reply: cut off at max_tokens=4096; reply: not JSON")


def test_a_complete_reply_at_the_token_limit_is_still_used(api: FakeAPI, llm: ChatLLM) -> None:
    api.reply(json.dumps(REPLY), truncated=True)
    assert summary(llm.extract(TURNS)) == EXPECTED


def test_an_empty_reply_fails_the_call(api: FakeAPI, llm: ChatLLM) -> None:
    api.reply("")
    with pytest.raises(LLMError, match=r"unusable \(reply: empty\)"):
        llm.extract(TURNS)
    assert llm.last_rejected == ["reply: empty"]
    api.reply('{"claims": []}')  # nothing to say is said so
    assert llm.extract(TURNS) == [] and llm.last_rejected == []


def test_an_unusable_reply_inside_add_keeps_the_turns_for_a_retry(
    api: FakeAPI, llm: ChatLLM
) -> None:
    with Memvara(llm=llm) as mem:
        api.reply("Sorry, I can't help with that.")
        with pytest.raises(ExtractionPendingError, match="unusable") as caught:
            mem.add("My sister Ada lives in Quito")
        (waiting,) = caught.value.pending
        api.reply(json.dumps({"claims": [{"subject": "Ada", "predicate": "lives_in",
                                          "object": "Quito", "turn": 0}]}))
        receipt = mem.retry_extraction()
        assert [(c.subject, c.object, c.sources) for c in receipt.added] == [
            ("Ada", "Quito", (waiting,))]
        assert receipt.pending == ()


def test_the_same_reply_gives_the_same_claims_from_either_backend() -> None:
    apis = {vendor: FakeAPI(vendor) for vendor in ("anthropic", "openai")}
    results = {}
    for vendor, fake in apis.items():
        backend = build(vendor, fake)
        fake.reply(json.dumps(REPLY))
        claims = [replace(c, extractor="") for c in backend.extract(TURNS)]
        results[vendor] = (claims, backend.last_rejected)
        close(backend)
    assert results["anthropic"] == results["openai"]
    assert len(results["anthropic"][0]) == 3
    assert apis["anthropic"].prompts()[1] == apis["openai"].prompts()[1]


# -- failures of the call itself -------------------------------------------------------------


def raise_(error: type[Exception], message: str) -> Answer:
    def answer(request: httpx2.Request) -> httpx2.Response:
        raise error(message, request=request)  # type: ignore[call-arg]

    return answer


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        (raise_(httpx2.ConnectError, "connection refused"), "APIConnectionError"),
        (raise_(httpx2.ReadTimeout, "read timed out"), "APITimeoutError"),
        (raise_(httpx2.ConnectTimeout, "connect timed out"), "APITimeoutError"),
        (httpx2.Response(500, json={"error": {"message": "boom"}}), "InternalServerError"),
        (httpx2.Response(401, json={"error": {"message": "bad key"}}), "AuthenticationError"),
        (httpx2.Response(429, json={"error": {"message": "slow down"}}), "RateLimitError"),
        (httpx2.Response(400, json={"error": {"message": "bad request"}}), "BadRequestError"),
    ],
)
def test_a_failed_call_raises_llm_error_from_the_sdk_error(
    vendor: str, api: FakeAPI, llm: ChatLLM, answer: Answer, cause: str
) -> None:
    api.answers.append(answer)
    with pytest.raises(LLMError, match=f"^{vendor}: {cause}") as raised:
        llm.extract(TURNS)
    sdk_error = anthropic.AnthropicError if vendor == "anthropic" else openai.OpenAIError
    assert isinstance(raised.value.__cause__, sdk_error)
    assert type(raised.value.__cause__).__name__ == cause
    assert raised.value.code == "llm_error"
    assert llm.calls == 1 and len(api.requests) == 1  # counted, and not retried


@pytest.mark.parametrize("body, kind", [
    (b"<html><body>502 Bad Gateway</body></html>", "text/html"),  # a proxy's page
    (b"[]", "application/json"),  # another API's answer
])
def test_a_response_that_is_no_reply_raises_llm_error(
    vendor: str, api: FakeAPI, llm: ChatLLM, body: bytes, kind: str
) -> None:
    api.answers.append(httpx2.Response(200, content=body, headers={"content-type": kind}))
    with pytest.raises(LLMError, match=f"^{vendor}: the response is no reply the SDK can read"
                                        " \\(AttributeError: ") as raised:
        llm.extract(TURNS)
    assert raised.value.__cause__ is not None and not isinstance(raised.value.__cause__, LLMError)
    assert llm.calls == 1


def test_a_refusal_raises_llm_error(vendor: str, api: FakeAPI, llm: ChatLLM) -> None:
    api.refusal()
    with pytest.raises(LLMError, match=f"^{vendor}: the model refused"):
        llm.extract(TURNS)


def test_a_refusal_of_a_classification_raises_too(api: FakeAPI, llm: ChatLLM) -> None:
    api.refusal()
    with pytest.raises(LLMError):
        llm.classify_predicate("billing_address")


# -- classification ------------------------------------------------------------------------


def test_classify_predicate_asks_once_and_builds_the_spec(api: FakeAPI, llm: ChatLLM) -> None:
    api.reply('{"cardinality": "one", "volatility": "slow"}')
    spec = llm.classify_predicate("Billing Address")
    assert spec == PredicateSpec("billing_address", Cardinality.ONE, Volatility.SLOW)
    assert llm.calls == 1
    system, prompt = api.prompts()
    assert system == _prompts.CLASSIFICATION_SYSTEM
    assert json.loads(prompt) == {"predicate": "billing_address"}
    body = api.body()
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 512


@pytest.mark.parametrize(
    "text", ['{"cardinality": "several", "volatility": "slow"}', "one, slow", "", "[]"]
)
def test_an_unusable_classification_is_no_answer(
    api: FakeAPI, llm: ChatLLM, text: str
) -> None:
    api.reply(text)
    assert llm.classify_predicate("billing_address") is None


def test_a_failed_classification_call_raises(api: FakeAPI, llm: ChatLLM) -> None:
    api.answers.append(httpx2.Response(503, json={"error": {"message": "overloaded"}}))
    with pytest.raises(LLMError):
        llm.classify_predicate("billing_address")


def test_an_unusable_predicate_name_is_refused_without_a_call(api: FakeAPI, llm: ChatLLM) -> None:
    with pytest.raises(InvalidArgumentError, match="predicate"):
        llm.classify_predicate(" - ")
    assert api.requests == []


# -- entity resolution (opt-in) -----------------------------------------------------------


def test_resolve_entity_returns_a_candidate(api: FakeAPI, llm: ChatLLM) -> None:
    api.reply('{"match": "IBM"}')
    assert llm.resolve_entity("Big Blue", ["Acme", "IBM"]) == "IBM"
    system, prompt = api.prompts()
    assert system == _prompts.RESOLUTION_SYSTEM
    assert json.loads(prompt) == {"name": "Big Blue", "candidates": ["Acme", "IBM"]}


@pytest.mark.parametrize(
    "text", ['{"match": null}', '{"match": "International Business Machines"}', "IBM"]
)
def test_resolve_entity_returns_none_unless_a_candidate_is_named(
    api: FakeAPI, llm: ChatLLM, text: str
) -> None:
    api.reply(text)
    assert llm.resolve_entity("Big Blue", ["Acme", "IBM"]) is None


def test_resolve_entity_with_no_candidates_makes_no_call(api: FakeAPI, llm: ChatLLM) -> None:
    assert llm.resolve_entity("Big Blue", []) is None
    assert api.requests == [] and llm.calls == 0


@pytest.mark.parametrize(
    ("surface", "candidates", "argument"),
    [
        ("", ["IBM"], "surface"),
        (None, ["IBM"], "surface"),
        ("Big Blue", "IBM", "candidates"),
        ("Big Blue", None, "candidates"),
        ("Big Blue", ["IBM", 3], r"candidates\[1\]"),
    ],
)
def test_resolve_entity_checks_its_arguments(
    api: FakeAPI, llm: ChatLLM, surface: object, candidates: object, argument: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=f"^{argument}: "):
        llm.resolve_entity(surface, candidates)  # type: ignore[arg-type]
    assert api.requests == []


# -- vendor-specific response shapes ------------------------------------------------------


def test_anthropic_joins_text_blocks_and_skips_the_rest() -> None:
    api = FakeAPI("anthropic")
    llm = build("anthropic", api)
    half = len(json.dumps(REPLY)) // 2
    api.answers.append(anthropic_message([
        {"type": "thinking", "thinking": "the user moved", "signature": "sig"},
        {"type": "text", "text": json.dumps(REPLY)[:half]},
        {"type": "text", "text": json.dumps(REPLY)[half:]},
    ], "end_turn"))
    assert summary(llm.extract(TURNS)) == EXPECTED
    close(llm)


def test_openai_content_filter_and_empty_choices_raise() -> None:
    api = FakeAPI("openai")
    llm = build("openai", api)
    silent = {"role": "assistant", "content": None, "refusal": None}
    api.answers.append(openai_completion(silent, "content_filter"))
    with pytest.raises(LLMError, match="content filter"):
        llm.extract(TURNS)
    api.answers.append(httpx2.Response(200, json={
        "id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4.1", "choices": []}))
    with pytest.raises(LLMError, match="reply: empty"):
        llm.extract(TURNS)
    api.answers.append(openai_completion(silent, "stop"))
    with pytest.raises(LLMError, match="reply: empty"):
        llm.extract(TURNS)
    close(llm)


# -- construction ------------------------------------------------------------------------


Backend = type[AnthropicLLM] | type[OpenAILLM]
BACKENDS: list[Backend] = [AnthropicLLM, OpenAILLM]


@pytest.mark.parametrize("cls", BACKENDS)
def test_a_backend_is_an_llm_and_names_itself(cls: Backend) -> None:
    backend = cls(api_key="test-key")
    try:
        assert isinstance(backend, LLM)
        assert backend.is_null is False
        default = "claude-opus-5" if cls is AnthropicLLM else "gpt-4.1"
        assert backend.model == default
        assert backend.extractor == f"{'anthropic' if cls is AnthropicLLM else 'openai'}:{default}"
        assert repr(backend) == f"{cls.__name__}(model={default!r})"
        assert (backend.calls, backend.last_rejected) == (0, [])
    finally:
        close(backend)


@pytest.mark.parametrize("cls", BACKENDS)
def test_a_built_client_gets_the_key_timeout_and_retries(cls: Backend) -> None:
    backend = cls("some-model", api_key="sk-test", timeout=7.5, max_retries=0, max_tokens=100)
    try:
        assert backend.client.api_key == "sk-test"
        assert backend.client.timeout == 7.5
        assert backend.client.max_retries == 0
        assert backend.max_tokens == 100 and backend.model == "some-model"
    finally:
        backend.client.close()


@pytest.mark.parametrize("cls", BACKENDS)
@pytest.mark.parametrize(
    ("settings", "argument"),
    [
        ({"model": ""}, "model"),
        ({"model": "  "}, "model"),
        ({"model": None}, "model"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 10.0}, "max_tokens"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1.0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"timeout": "30"}, "timeout"),
        ({"timeout": True}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"max_retries": False}, "max_retries"),
    ],
)
def test_settings_are_checked(cls: Backend, settings: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=f"^{argument}: "):
        cls(api_key="k", **settings)  # type: ignore[arg-type]


def test_a_client_and_a_key_are_not_both_allowed() -> None:
    client = anthropic.Anthropic(api_key="k")
    with pytest.raises(InvalidArgumentError, match="^api_key: pass client or api_key"):
        AnthropicLLM(client=client, api_key="k")
    client.close()
    other = openai.OpenAI(api_key="k")
    with pytest.raises(InvalidArgumentError, match="^api_key: pass client or api_key"):
        OpenAILLM(client=other, api_key="k")
    other.close()


def test_missing_credentials_are_an_llm_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_PROFILE", "memvara-test-missing")
    with pytest.raises(LLMError, match="^anthropic: could not build a client") as raised:
        AnthropicLLM()
    assert isinstance(raised.value.__cause__, anthropic.AnthropicError)
    with pytest.raises(LLMError, match="^openai: could not build a client") as other:
        OpenAILLM()
    assert isinstance(other.value.__cause__, openai.OpenAIError)
