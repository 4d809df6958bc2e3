"""Drives one Python client library against a running gateway and reports what it observed.

Reads a plan (JSON) on stdin:
  {"client": "openai" | "langchain-openai" | "litellm",
   "base_url": "http://127.0.0.1:<port>/v1", "api_key": "<gateway key>",
   "targets": [{"name": ..., "checks": {"chat": {"model": ...}, "stream": {...}, ...}}]}
and writes one JSON document on stdout: {"observations": {target: {check: observation}}}.
An observation is what a user of the library sees: the answer's text, the finish reason,
the tool calls, the parsed object, the embeddings' count and size, the model ids, or the
exception the library raised (its class, HTTP status and message). Nothing is judged here:
the test that runs this script asserts on the observations.
"""

import json
import sys
import traceback

QUESTION = "What is the weather in Paris?"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}

from pydantic import BaseModel  # noqa: E402


CHECKS = ("chat", "stream", "tools", "structured", "error", "embeddings", "models")


def checks_in(scope):
    """The check functions a client defines, by name."""
    return {name: scope[name] for name in CHECKS if name in scope}


class Weather(BaseModel):
    city: str
    temperature_c: int


def failure(exc):
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
    return {
        "exception": type(exc).__name__,
        # Every class the exception is an instance of, as a user's `except` clause names it.
        "classes": [f"{c.__module__.split('.')[0]}.{c.__name__}" for c in type(exc).__mro__],
        "status": status,
        "message": str(exc),
    }


def calls_of(tool_calls):
    return [
        {"name": call.function.name, "arguments": json.loads(call.function.arguments)}
        for call in tool_calls or []
    ]


# --- the official openai library -------------------------------------------------------------


def openai_checks(plan):
    import openai

    client = openai.OpenAI(base_url=plan["base_url"], api_key=plan["api_key"], max_retries=0, timeout=30)

    def chat(spec):
        completion = client.chat.completions.create(
            model=spec["model"], messages=[{"role": "user", "content": spec["prompt"]}]
        )
        choice = completion.choices[0]
        return {
            "text": choice.message.content,
            "finish_reason": choice.finish_reason,
            "total_tokens": completion.usage.total_tokens if completion.usage else None,
        }

    def stream(spec):
        parts, finish, usage, chunks = [], None, None, 0
        with client.chat.completions.create(
            model=spec["model"],
            messages=[{"role": "user", "content": spec["prompt"]}],
            stream=True,
            stream_options={"include_usage": True},
        ) as events:
            for chunk in events:
                chunks += 1
                if chunk.usage:
                    usage = chunk.usage.total_tokens
                for choice in chunk.choices:
                    if choice.delta.content:
                        parts.append(choice.delta.content)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        return {"text": "".join(parts), "finish_reason": finish, "total_tokens": usage, "chunks": chunks}

    def tools(spec):
        completion = client.chat.completions.create(
            model=spec["model"],
            messages=[{"role": "user", "content": QUESTION}],
            tools=[WEATHER_TOOL],
        )
        choice = completion.choices[0]
        return {"finish_reason": choice.finish_reason, "calls": calls_of(choice.message.tool_calls)}

    def structured(spec):
        completion = client.chat.completions.parse(
            model=spec["model"],
            messages=[{"role": "user", "content": QUESTION}],
            response_format=Weather,
        )
        return {"parsed": completion.choices[0].message.parsed.model_dump()}

    def error(spec):
        client.chat.completions.create(model=spec["model"], messages=[{"role": "user", "content": "Hi"}])
        return {}  # no error raised: the assertions on the error fail

    def embeddings(spec):
        result = client.embeddings.create(model=spec["model"], input=["first text", "second text"])
        return {"count": len(result.data), "dimensions": len(result.data[0].embedding)}

    def models(spec):
        return {"ids": [model.id for model in client.models.list()]}

    return checks_in(locals())


# --- langchain-openai ------------------------------------------------------------------------


def langchain_checks(plan):
    from langchain_core.messages import HumanMessage
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings

    def llm(model, **extra):
        return ChatOpenAI(
            model=model,
            base_url=plan["base_url"],
            api_key=plan["api_key"],
            max_retries=0,
            timeout=30,
            **extra,
        )

    def chat(spec):
        message = llm(spec["model"]).invoke([HumanMessage(spec["prompt"])])
        return {
            "text": message.content,
            "finish_reason": message.response_metadata.get("finish_reason"),
            "total_tokens": (message.usage_metadata or {}).get("total_tokens"),
        }

    def stream(spec):
        parts, finish, usage, chunks = [], None, None, 0
        for chunk in llm(spec["model"], stream_usage=True).stream([HumanMessage(spec["prompt"])]):
            chunks += 1
            if chunk.content:
                parts.append(chunk.content)
            finish = chunk.response_metadata.get("finish_reason") or finish
            if chunk.usage_metadata:
                usage = chunk.usage_metadata.get("total_tokens")
        return {"text": "".join(parts), "finish_reason": finish, "total_tokens": usage, "chunks": chunks}

    def tools(spec):
        message = llm(spec["model"]).bind_tools([WEATHER_TOOL]).invoke([HumanMessage(QUESTION)])
        return {
            "finish_reason": message.response_metadata.get("finish_reason"),
            "calls": [{"name": call["name"], "arguments": call["args"]} for call in message.tool_calls],
        }

    def structured(spec):
        weather = llm(spec["model"]).with_structured_output(Weather, method="json_schema").invoke(QUESTION)
        return {"parsed": weather.model_dump()}

    def error(spec):
        llm(spec["model"]).invoke("Hi")
        return {}  # no error raised: the assertions on the error fail

    def embeddings(spec):
        # A gateway in front of other providers takes text, not OpenAI token ids.
        vectors = OpenAIEmbeddings(
            model=spec["model"],
            base_url=plan["base_url"],
            api_key=plan["api_key"],
            check_embedding_ctx_length=False,
            max_retries=0,
        ).embed_documents(["first text", "second text"])
        return {"count": len(vectors), "dimensions": len(vectors[0])}

    return checks_in(locals())


# --- LiteLLM's client, with the gateway as an OpenAI-compatible endpoint ---------------------


def litellm_checks(plan):
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    common = {"api_base": plan["base_url"], "api_key": plan["api_key"], "num_retries": 0, "timeout": 30}

    def model_of(spec):
        return "openai/" + spec["model"]

    def chat(spec):
        response = litellm.completion(
            model=model_of(spec), messages=[{"role": "user", "content": spec["prompt"]}], **common
        )
        choice = response.choices[0]
        return {
            "text": choice.message.content,
            "finish_reason": choice.finish_reason,
            "total_tokens": response.usage.total_tokens,
        }

    def stream(spec):
        parts, finish, chunks = [], None, 0
        for chunk in litellm.completion(
            model=model_of(spec),
            messages=[{"role": "user", "content": spec["prompt"]}],
            stream=True,
            **common,
        ):
            chunks += 1
            for choice in chunk.choices:
                if choice.delta.content:
                    parts.append(choice.delta.content)
                if choice.finish_reason:
                    finish = choice.finish_reason
        return {"text": "".join(parts), "finish_reason": finish, "chunks": chunks}

    def tools(spec):
        response = litellm.completion(
            model=model_of(spec),
            messages=[{"role": "user", "content": QUESTION}],
            tools=[WEATHER_TOOL],
            **common,
        )
        choice = response.choices[0]
        return {"finish_reason": choice.finish_reason, "calls": calls_of(choice.message.tool_calls)}

    def structured(spec):
        response = litellm.completion(
            model=model_of(spec),
            messages=[{"role": "user", "content": QUESTION}],
            response_format=Weather,
            **common,
        )
        return {"parsed": Weather.model_validate_json(response.choices[0].message.content).model_dump()}

    def error(spec):
        litellm.completion(model=model_of(spec), messages=[{"role": "user", "content": "Hi"}], **common)
        return {}  # no error raised: the assertions on the error fail

    def embeddings(spec):
        result = litellm.embedding(model=model_of(spec), input=["first text", "second text"], **common)
        return {"count": len(result.data), "dimensions": len(result.data[0]["embedding"])}

    return checks_in(locals())


CLIENTS = {"openai": openai_checks, "langchain-openai": langchain_checks, "litellm": litellm_checks}


def main():
    plan = json.load(sys.stdin)
    checks = CLIENTS[plan["client"]](plan)
    observations = {}
    for target in plan["targets"]:
        seen = observations.setdefault(target["name"], {})
        for check, spec in target["checks"].items():
            run = checks.get(check)
            if run is None:
                continue
            try:
                seen[check] = run(spec)
            except Exception as exc:  # the observation is the exception itself
                seen[check] = failure(exc)
                print(f"{plan['client']} {target['name']} {check}:", file=sys.stderr)
                traceback.print_exc(file=sys.stderr)
    json.dump({"checks": sorted(checks), "observations": observations}, sys.stdout)


if __name__ == "__main__":
    main()
