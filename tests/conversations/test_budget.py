"""Budgets on the runtime (cumulative) and per exec; costs from genai-prices."""

from __future__ import annotations

from decimal import Decimal

import pytest
from conversation_helpers import WAY_IDS, WAYS, run, runtime
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price
from llmport import (
    Budget,
    BudgetExceeded,
    OptionError,
    Session,
    TokenLimitExceeded,
    agentic_function,
)
from llmport.messages.types import Usage
from llmport.testing import Script, call_tools, reply

LONG = "x" * 400  # ~100 estimated input tokens


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_cumulative_input_budget_stops_the_request_that_would_cross_it(
    way: tuple[str, bool],
) -> None:
    usage = Usage(input_tokens=100, output_tokens=5)
    script = Script([reply("a", usage=usage), reply("b", usage=usage), reply("c", usage=usage)])
    rt = runtime(script, budget=Budget(input_tokens=250))
    await run(way, rt, LONG)
    await run(way, rt, LONG)  # 200 used, each request under the budget alone
    with pytest.raises(TokenLimitExceeded) as caught:
        await run(way, rt, LONG)
    assert len(script.requests) == 2  # the third was never sent
    assert caught.value.scope == "runtime" and caught.value.budget == 250
    assert isinstance(caught.value, BudgetExceeded)


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_an_exec_budget_limits_one_run_and_is_never_retried(way: tuple[str, bool]) -> None:
    from llmport import Tool

    tool = Tool("noop", "", {"type": "object", "properties": {}}, lambda: "ok")
    script = Script([call_tools(("noop", {})), "done", "fresh"])
    rt = runtime(script, max_retries=3)
    with pytest.raises(BudgetExceeded) as caught:
        await run(way, rt, "go", tools=[tool], budget=Budget(requests=1))
    assert caught.value.kind == "requests" and caught.value.scope == "run"
    assert len(script.requests) == 1
    # The next run has its own budget.
    assert (await run(way, rt, "again", budget={"requests": 1})).text == "done"


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_the_output_side_is_checked_after_each_response(way: tuple[str, bool]) -> None:
    script = Script([reply("long answer", usage=Usage(10, 500)), "never"])
    rt = runtime(script, budget=Budget(output_tokens=100))
    with pytest.raises(BudgetExceeded, match="output_tokens 500 > 100"):
        await run(way, rt, "q")
    assert rt.usage.output_tokens == 500  # what was used is kept
    with pytest.raises(BudgetExceeded, match="output_tokens"):
        await run(way, rt, "q")  # already over: nothing more is sent
    assert len(script.requests) == 1


def test_a_budget_failure_is_recorded_in_the_dag() -> None:
    script = Script([])
    rt = runtime(script)
    session = Session()

    @agentic_function(session=session)
    def task() -> str:
        return str(rt.exec(LONG, budget=Budget(input_tokens=10)))

    with pytest.raises(TokenLimitExceeded):
        task()
    llm = next(n for n in session.nodes() if n.kind == "llm")
    assert llm.status == "error" and "TokenLimitExceeded" in str(llm.result)
    assert script.requests == []


def test_bad_budgets_are_option_errors() -> None:
    with pytest.raises(OptionError, match="input_tokens"):
        Budget(input_tokens=-1)
    with pytest.raises(OptionError, match="cost_usd"):
        Budget(cost_usd="lots")
    with pytest.raises(OptionError, match="budget must be"):
        runtime(Script([]), budget=3)


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_costs_match_genai_prices_cached_and_uncached(way: tuple[str, bool]) -> None:
    uncached = Usage(input_tokens=1200, output_tokens=300)
    cached = Usage(input_tokens=1200, output_tokens=300, cache_read_tokens=1000)
    script = Script([reply("a", usage=uncached), reply("b", usage=cached)], prefix="openai")
    rt = runtime(script, model="openai:gpt-4o")
    first = await run(way, rt, "q")
    second = await run(way, rt, "q")

    def expected(**counts: int) -> Decimal:
        return calc_price(
            PriceUsage(**counts), model_ref="gpt-4o", provider_id="openai"
        ).total_price

    plain = expected(input_tokens=1200, output_tokens=300)
    with_cache = expected(input_tokens=1200, output_tokens=300, cache_read_tokens=1000)
    assert first.usage.cost == plain
    assert second.usage.cost == with_cache < plain
    assert rt.usage.cost == plain + with_cache


@pytest.mark.parametrize("way", WAYS, ids=WAY_IDS)
async def test_a_cost_budget_stops_the_runtime(way: tuple[str, bool]) -> None:
    usage = Usage(input_tokens=100_000, output_tokens=10_000)
    script = Script([reply("a", usage=usage), "never"], prefix="openai")
    rt = runtime(script, model="openai:gpt-4o", budget=Budget(cost_usd="0.10"))
    with pytest.raises(BudgetExceeded) as caught:
        await run(way, rt, "q")  # 100k in + 10k out on gpt-4o is $0.35
    assert caught.value.kind == "cost_usd"
    with pytest.raises(BudgetExceeded):
        await run(way, rt, "q")
    assert len(script.requests) == 1


async def test_an_unknown_model_has_no_cost() -> None:
    script = Script(["a"])
    result = runtime(script).run("q")
    assert result.usage.cost is None
    assert "cost" not in result.usage.to_dict()


def test_pending_prices_stay_apart_across_copy_and_add() -> None:
    pytest.importorskip("genai_prices")
    from llmport.observe import prices

    one = Usage(input_tokens=1_000_000, output_tokens=0).priced_as("openai", "gpt-4o-mini")
    copied = one.copy()
    copied.priced_as("openai", "gpt-4o-mini")  # a second request on the copy only
    total = Usage()
    total.add(one)
    total.add(copied)
    single = prices.price("openai", "gpt-4o-mini", 1_000_000, 0)
    assert single is not None
    assert one.cost == single and copied.cost == 2 * single and total.cost == 3 * single
    one.cost = None  # setting a cost drops the pending prices of that object alone
    assert one.cost is None and total.cost == 3 * single
    discount = prices.BATCH_DISCOUNT  # made on first read
    assert isinstance(discount, Decimal) and discount == Decimal("0.5")


def test_a_total_grows_its_pending_prices_in_place_and_copies_are_snapshots() -> None:
    """Adding a call's usage to a total costs that call's entries, not every entry so far.

    (The runtime's total is added to on every call: rebuilding its pending
    prices each time made a call's cost grow with the calls before it.)
    """
    from llmport.observe import prices

    total = Usage()
    total.add(Usage(input_tokens=1_000).priced_as("openai", "gpt-4o-mini"))
    pending = total._unpriced
    snapshot = total.copy()
    for _ in range(99):
        total.add(Usage(input_tokens=1_000).priced_as("openai", "gpt-4o-mini"))
        assert total._unpriced is pending  # extended, never rebuilt
    single = prices.price("openai", "gpt-4o-mini", 1_000, 0)
    assert single is not None
    assert total.cost == 100 * single and total.input_tokens == 100_000
    assert snapshot.cost == single  # a copy does not see later adds
