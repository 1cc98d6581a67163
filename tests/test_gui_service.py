"""``c4engine gui --service URL``: the page's analysis asked of a real ``c4engine serve``.

Both servers are real processes on loopback; the page is a WebSocket client
speaking as the page does (the browser's view is in tests/test_gui_browser.py)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="c4engine gui needs the gui extra")

import aiohttp  # noqa: E402
from gui_process import GuiServer  # noqa: E402
from hostile_http import HostileServer, json_answer  # noqa: E402
from service_process import ServiceProcess  # noqa: E402

from c4engine.geometry import STANDARD, Geometry  # noqa: E402
from c4engine.reviewer.verdicts import pons_of_mate  # noqa: E402

WAIT = 120.0  # seconds: a first start may compile the kernel
ANALYSED = "7571473112654763"  # 16 stones; its columns win, draw and lose
WIDE = Geometry.parse("8x8")
WIDE_ANALYSED = "65313764667674211433282861157268238221281168"  # 44 stones, both edge columns: a key past 64 bits


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with ServiceProcess(tmp_path_factory.mktemp("service") / "cache.sqlite", "--threads", "1",
                        "--boards", "8x8") as server:
        yield server


def gui_with(url: str) -> Iterator[GuiServer]:
    gui = GuiServer("--service", url)
    yield gui
    gui.close()


@pytest.fixture
def gui(service: ServiceProcess) -> Iterator[GuiServer]:
    yield from gui_with(service.url)


@pytest.fixture
def gui_of_a_dead_service() -> Iterator[GuiServer]:
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield from gui_with(f"http://127.0.0.1:{port}")


async def talk(gui: GuiServer, requests: list[dict[str, Any]],
               done: Any) -> list[dict[str, Any]]:
    """Send ``requests`` as the page does, then read messages until ``done(messages)``."""
    messages: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as client, \
            client.ws_connect(f"{gui.url}ws", headers={"Origin": gui.url.rstrip("/")}) as ws:
        for request in requests:
            await ws.send_json(request)
        while not done(messages):
            messages.append(await asyncio.wait_for(ws.receive_json(), WAIT))
    return messages


def service_infos(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The service's analysis ``info`` messages for the latest state's position."""
    versions = [m["version"] for m in messages if m["type"] == "state"]
    return [m for m in messages if m["type"] == "info" and m.get("source") == "service"
            and versions and m["version"] == versions[-1]]


def pons_shown(info: dict[str, Any], stones: int, geometry: Geometry = STANDARD) -> int:
    """The Pons score a page's ``info`` message says for its column."""
    score = info["score"]
    assert score["bound"] is None
    return 0 if score["kind"] == "cp" else pons_of_mate(score["value"], stones, geometry)


def test_bad_service_address_is_a_usage_error() -> None:
    run = subprocess.run([sys.executable, "-m", "c4engine", "gui", "--no-browser", "--service", "ftp://x"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--service" in run.stderr and "not an http:// or https:// address" in run.stderr


def test_the_pages_analysis_is_the_services_answer(gui: GuiServer, service: ServiceProcess) -> None:
    """Every column's score the page is sent equals ``/solve``'s, best first."""
    status, _, answer = service.get(f"/solve?pos={ANALYSED}")
    assert status == 200
    expected = {col: score for col, score in enumerate(answer["score"], start=1) if score != 100}
    messages = asyncio.run(talk(gui, [{"op": "settings", "mode": "humans", "analysis": True},
                                      {"op": "set", "text": ANALYSED}],
                                lambda ms: len(service_infos(ms)) == len(expected)))
    infos = service_infos(messages)
    shown = {info["pv"][0]: pons_shown(info, len(ANALYSED)) for info in infos}
    assert shown == expected
    assert [info["multipv"] for info in infos] == list(range(1, len(expected) + 1))
    assert pons_shown(infos[0], len(ANALYSED)) == max(expected.values())
    assert {0} < set(expected.values())  # it has a draw, and more than draws
    assert [m for m in messages if m["type"] == "state"][-1]["service"] == service.url


def test_a_service_that_is_down_is_reported_and_the_game_goes_on(gui_of_a_dead_service: GuiServer) -> None:
    messages = asyncio.run(talk(gui_of_a_dead_service,
                                [{"op": "settings", "mode": "humans", "analysis": True},
                                 {"op": "move", "column": 4}],
                                lambda ms: any(m["type"] == "error" for m in ms)
                                and any(m["type"] == "state" and m["moves"] == [4] for m in ms)))
    errors = [m["message"] for m in messages if m["type"] == "error"]
    assert errors and errors[0].startswith("analysis service: http://127.0.0.1:")
    assert "refused" in errors[0].lower()


def test_a_wide_boards_analysis_is_the_services_answer(gui: GuiServer, service: ServiceProcess) -> None:
    """Issue 47: on 8x8, a position with stones in both edge columns was a 500 from
    the service, an error on the page; it is analysed as any other."""
    status, _, answer = service.get(f"/api/v1/position?board=8x8&pos={WIDE_ANALYSED}")
    assert status == 200 and answer["exact"], answer
    expected = {move["column"]: move["score"] for move in answer["moves"]}
    messages = asyncio.run(talk(gui, [{"op": "board", "board": "8x8"},
                                      {"op": "settings", "mode": "humans", "analysis": True},
                                      {"op": "set", "text": WIDE_ANALYSED}],
                                lambda ms: len(service_infos(ms)) == len(expected)
                                or any(m["type"] == "error" for m in ms)))
    assert [m for m in messages if m["type"] == "error"] == []
    shown = {info["pv"][0]: pons_shown(info, len(WIDE_ANALYSED), WIDE) for info in service_infos(messages)}
    assert shown == expected


def test_a_wrong_shaped_answer_is_an_error_and_the_next_position_is_asked() -> None:
    """Issue 47: an answer without its ``score`` ended the request's task with a
    KeyError; nothing reached the page and no later position was asked.  Now each
    position's wrong answer is an error on the page, and the next one is asked."""

    async def two_positions(gui: GuiServer) -> list[str]:
        errors: list[str] = []
        async with aiohttp.ClientSession() as client, \
                client.ws_connect(f"{gui.url}ws", headers={"Origin": gui.url.rstrip("/")}) as ws:
            for request in ({"op": "settings", "mode": "humans", "analysis": True}, {"op": "move", "column": 4}):
                await ws.send_json(request)
                asked = len(errors) + 1
                while len(errors) < asked:
                    message = await asyncio.wait_for(ws.receive_json(), 60)
                    if message["type"] == "error":
                        errors.append(message["message"])
        return errors

    with HostileServer(json_answer({"pos": "", "scores": [0] * 7})) as server:
        gui = GuiServer("--service", server.url)
        try:
            errors = asyncio.run(two_positions(gui))
        finally:
            gui.close()
    assert [line.split()[1] for line in server.requests] == ["/solve?pos=", "/solve?pos=4"]
    assert errors == [f"analysis service: {server.url}: wrong answer for <Position moves=''>: no 'score' field",
                      f"analysis service: {server.url}: wrong answer for <Position moves='4'>: "
                      "it is about pos '', not '4'"]
