"""The redactor (llmport.observe.redaction): what it learns and what it masks."""

from __future__ import annotations

import secrets as random_secrets

from llmport.observe.redaction import (
    header_secrets,
    looks_secret,
    redact,
    redact_settings,
    redact_url,
    register_secret,
    register_settings,
    secret_values,
    url_passwords,
)


def fresh(prefix: str = "LEAK") -> str:
    """A key no other test registered (the registry is process-wide and only grows)."""
    return f"{prefix}{random_secrets.token_hex(16)}"


def test_a_partial_echo_of_8_or_more_characters_is_masked() -> None:
    key = fresh("Odd-")
    register_secret(key)
    assert redact(f"key {key[:12]}****{key[-4:]} rejected") == "key *** rejected"
    assert redact(f"...{key[5:13]}...") == "...***..."  # exactly 8
    assert redact(f"...{key[5:12]}...") == f"...{key[5:12]}..."  # 7 are kept
    assert redact(f"tail {key[-12:]}") == "tail ***"


def test_a_public_prefix_and_plain_words_are_not_echoes() -> None:
    key = "sk-proj-" + random_secrets.token_hex(8) + "-contract-" + random_secrets.token_hex(8)
    register_secret(key)
    # The shape rule keeps the vendor's prefix; the prefix alone tells nothing about the key.
    assert redact("Incorrect API key provided: sk-proj-****ab12.") == (
        "Incorrect API key provided: sk-proj-***."
    )
    assert redact("the contract is signed") == "the contract is signed"
    assert redact(f"id {key[8:24]}") == "id ***"


def test_a_url_password_is_masked_and_learnt_from_settings() -> None:
    password = fresh("pw")
    url = f"https://gateway:{password}@proxy.example/v1"
    assert url_passwords(url) == (password, password)
    assert redact(f"POST {url}/chat") == "POST https://gateway:***@proxy.example/v1/chat"
    register_settings({"base_url": url})
    assert redact(f"the gateway said {password}") == "the gateway said ***"


def test_headers_that_look_secret_are_learnt_whatever_their_name() -> None:
    token = fresh("GW")
    headers = {
        "X-Tenant": token,  # looks like a credential
        "X-Gateway-Auth": "letmein-please",  # the name says so
        "Proxy-Token": "Bearer tok-0123456789ab",  # the bare token as well
        "User-Agent": "my app/1.0",  # neither
        "anthropic-beta": "prompt-caching-2024-07-31",  # a feature name, not a credential
    }
    found = header_secrets(headers)
    assert token in found and "letmein-please" in found
    assert "Bearer tok-0123456789ab" in found and "tok-0123456789ab" in found
    assert "my app/1.0" not in found and "prompt-caching-2024-07-31" not in found
    assert set(found) <= set(secret_values({"default_headers": headers}))
    shown = redact_settings({"api_key": "k" * 20, "default_headers": headers})
    assert shown["api_key"] == "***"
    assert shown["default_headers"] == {
        "X-Tenant": "***",
        "X-Gateway-Auth": "***",
        "Proxy-Token": "***",
        "User-Agent": "my app/1.0",
        "anthropic-beta": "prompt-caching-2024-07-31",
    }


def test_nothing_to_mask_gives_back_the_same_object() -> None:
    class Marked(str):
        pass

    text = Marked("see file:///notes.txt for the weather in Paris")
    assert redact(text) is text


def test_a_value_registered_without_partial_is_masked_whole_only() -> None:
    path = f"/opt/tools-{random_secrets.token_hex(4)}/bin:/usr/bin"
    register_secret(path, partial=False)
    assert redact(f"PATH={path}") == "PATH=***"
    fragment = path.split(":")[0]  # a fragment of a path is ordinary text
    assert redact(f"ran {fragment}/python") == f"ran {fragment}/python"
    register_secret(path)  # registering it again as a credential upgrades it
    assert redact(f"ran {fragment}/python") == "ran ***/python"


def test_looks_secret_by_name_or_by_value() -> None:
    assert looks_secret("GITHUB_TOKEN", "ghp_short")
    assert looks_secret("X_ANYTHING", "a1b2c3d4e5f6a7b8c9d0")
    assert not looks_secret("PATH", "/usr/local/bin:/usr/bin")
    assert not looks_secret("LOG_LEVEL", "debug-verbose-everything")


def test_a_vendors_own_half_masking_shows_too_much_and_is_masked() -> None:
    """Start and end around stars: 8 characters of the key together (Gemini's echo)."""
    key = "AIzaSyFA" + random_secrets.token_hex(14)[:27] + "hijk"
    register_secret(key)
    assert redact("API key not valid: AIzaSyFA**********hijk.") == "API key not valid: ***."
    assert redact(f"[{key[:6]}***{key[-6:]}]") == "[***]"  # 2 + 6 past the public prefix
    # Fewer than 8 of its characters, another key's ends, plain stars: nothing to mask.
    assert redact("AIzaSyF**********hijk") == "AIzaSyF**********hijk"
    assert redact("AIzaSyFA**********wxyz") == "AIzaSyFA**********wxyz"
    assert redact("a ** b *** c ***") == "a ** b *** c ***"


def test_query_string_secrets_are_masked_and_learnt_from_settings() -> None:
    password = fresh("pw")
    url = f"postgresql://app@db/x?sslmode=require&password={password}&application_name=me"
    assert redact_url(url) == (
        "postgresql://app@db/x?sslmode=require&password=***&application_name=me"
    )
    assert redact(f"cannot reach {url}") == f"cannot reach {redact_url(url)}"
    assert redact_url("https://h/v1?api_key=abc&X-Amz-Signature=0f&sig=1&alt=sse") == (
        "https://h/v1?api_key=***&X-Amz-Signature=***&sig=***&alt=sse"
    )
    assert redact_url("redis://:hunter22@cache:6379/0") == "redis://:***@cache:6379/0"
    assert password in url_passwords(url)
    register_settings({"dsn": url})
    assert redact(f"the database said {password}") == "the database said ***"


def test_a_setting_naming_a_token_field_or_limit_is_not_a_secret() -> None:
    # The OpenAI plugin's max_tokens_field holds a field name: learnt as a secret, it
    # masked every "completion_tokens" in logs and recordings as a partial echo.
    settings = {"max_tokens_field": "max_completion_tokens", "auth_token": fresh()}
    assert secret_values(settings) == (settings["auth_token"],)
    register_settings(settings)
    assert redact('"usage": {"completion_tokens": 3}') == '"usage": {"completion_tokens": 3}'
