"""A Streamlit browser tab at the protocol level, for load benchmarks: a websocket session that
speaks the web frontend's protocol (``/_stcore/stream``, BackMsg/ForwardMsg protobufs): it runs a
page at its URL, sends widget values, button clicks and components v2 events, keeps the
``st.fragment(run_every=...)`` timers the server asks for, and records every text that arrives
(with its arrival time). Drawing is left out: "visible" means "the message that draws it arrived".
"""

from __future__ import annotations

import asyncio
import re
import time

from fixtures.widget_events import component_event

TIMEOUT_S = 60.0


class Client:
    """One browser tab, at the protocol level: widget values, fragment timers, and every text that
    arrived (with its arrival time), for :meth:`wait_text`."""

    def __init__(self, base: str, name: str, query: str = "") -> None:
        self.base, self.name, self.query = base, name, query
        self.page_hash = ""
        self.widgets: dict[str, tuple[str, str, object]] = {}  # key -> (widget id, fragment id, element)
        self.values: dict[str, object] = {}  # widget id -> WidgetState
        self.texts: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.timers: dict[str, asyncio.Task] = {}
        self.news = asyncio.Event()
        self.ws = None
        self.run_ids: set[str] | None = None  # widgets drawn by the run in progress
        self.run_timers: set[str] = set()  # fragment timers started by the run in progress
        self.abort = lambda: None  # a reason to stop waiting (the teacher stops when a student failed)

    async def open(self) -> None:
        import websockets

        url = self.base.replace("http", "ws", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(url, subprotocols=["streamlit"], max_size=None, ping_interval=None)
        self.reader = asyncio.create_task(self._read())
        await self.send()

    async def close(self) -> None:
        for task in self.timers.values():
            task.cancel()
        self.reader.cancel()
        await self.ws.close()

    async def send(
        self,
        *,
        trigger: str | None = None,
        event: tuple[str, str, object] | None = None,
        fragment: str = "",
        auto: bool = False,
        **values,
    ) -> float:
        """A rerun as the frontend sends it: every widget value, ``trigger`` (a button key) clicked,
        ``event`` (component key, event name, value) sent by a components v2 element, ``values``
        (key -> (field, value)) changed. Returns the time just before it left (its answer may arrive
        while the send is still being awaited)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        for key, (field, value) in values.items():
            state = WidgetState(id=self.widgets[key][0])
            if field == "string_array_value":
                state.string_array_value.data.extend(value)
            else:
                setattr(state, field, value)
            self.values[state.id] = state
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string, rs.page_name, rs.page_script_hash = self.query, "classroom", self.page_hash
        rs.fragment_id, rs.is_auto_rerun = fragment, auto
        rs.context_info.url = f"{self.base}/classroom"
        rs.widget_states.widgets.extend(self.values.values())
        if trigger:
            rs.widget_states.widgets.append(WidgetState(id=self.widgets[trigger][0], trigger_value=True))
        if event:
            key, name, value = event
            rs.widget_states.widgets.append(component_event(self.widgets[key][0], name, value))
        data, t = msg.SerializeToString(), time.perf_counter()
        await self.ws.send(data)
        return t

    async def _tick(self, fragment: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.send(fragment=fragment, auto=True)

    def _element(self, el, fragment: str) -> None:
        kind = el.WhichOneof("type")
        sub = getattr(el, kind)
        wid = getattr(sub, "id", "")
        if wid.startswith("$$ID-") and wid.count("-") >= 2:
            self.widgets[wid.split("-", 2)[2]] = (wid, fragment, sub)
            if self.run_ids is not None:
                self.run_ids.add(wid)
        text = {"plotly_chart": "spec", "exception": "message"}.get(kind, "body")
        if hasattr(sub, text):
            self.texts.append((time.perf_counter(), getattr(sub, text)))
        if kind == "exception" or (kind == "alert" and sub.format in (1, 2)):
            self.errors.append(f"{self.name}: {kind}: {getattr(sub, text)[:200]}")

    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            async for data in self.ws:
                f = ForwardMsg()
                f.ParseFromString(data)
                kind = f.WhichOneof("type")
                if kind == "delta" and f.delta.WhichOneof("type") == "new_element":
                    self._element(f.delta.new_element, f.delta.fragment_id)
                elif kind == "navigation":
                    self.page_hash = next(
                        (p.page_script_hash for p in f.navigation.app_pages if p.url_pathname == "classroom"), ""
                    )
                elif kind == "new_session":  # a run starts (of the page or of a fragment)
                    self.run_ids, self.run_timers = set(), set()
                elif kind == "script_finished" and f.script_finished == 0 and self.run_ids is not None:
                    # like the frontend after a full run: forget the values of widgets it did not draw
                    # and stop the timers of fragments it did not start
                    self.values = {k: v for k, v in self.values.items() if k in self.run_ids}
                    for fid in set(self.timers) - self.run_timers:
                        self.timers.pop(fid).cancel()
                    self.run_ids = None
                elif kind == "page_info_changed":
                    self.query = f.page_info_changed.query_string
                elif kind == "auto_rerun":
                    fid = f.auto_rerun.fragment_id
                    self.run_timers.add(fid)
                    if fid not in self.timers:
                        self.timers[fid] = asyncio.create_task(self._tick(fid, f.auto_rerun.interval))
                elif kind == "stop_auto_rerun":
                    for fid in f.stop_auto_rerun.fragment_ids:
                        task = self.timers.pop(fid, None)
                        task and task.cancel()
                self.news.set()
        except Exception as e:  # a dropped connection is an error of the run, not of the script
            if not isinstance(e, asyncio.CancelledError):
                self.errors.append(f"{self.name}: connection: {type(e).__name__}: {e}")

    async def wait(self, found, timeout: float = TIMEOUT_S):
        """Wait until ``found()`` returns something other than None; TimeoutError after ``timeout``."""
        deadline = time.perf_counter() + timeout
        while (value := found()) is None:
            if reason := self.abort():
                raise RuntimeError(f"{self.name}: gave up waiting: {reason}")
            self.news.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"{self.name}: timed out")
            try:
                await asyncio.wait_for(self.news.wait(), left)
            except TimeoutError:
                pass
        return value

    async def wait_text(self, pattern: str, since: float = 0.0, timeout: float = TIMEOUT_S) -> tuple[float, str]:
        """The arrival time and text of the first text after ``since`` that matches ``pattern``."""
        rx = re.compile(pattern)
        return await self.wait(
            lambda: next(((t, s) for t, s in self.texts if t >= since and rx.search(s)), None), timeout
        )

    async def wait_widget(self, key: str, timeout: float = TIMEOUT_S) -> tuple[str, str, object]:
        return await self.wait(lambda: self.widgets.get(key), timeout)
