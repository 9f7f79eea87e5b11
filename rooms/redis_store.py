"""Rooms in Redis, so several app processes (replicas) see the same rooms: the :class:`RoomStore`
of ``rooms.store`` with the same rules, each change one Lua script (atomic on the
server: two answers at the same moment are both kept, a reveal and an answer never interleave).

Keys of room ``C`` (all expire :data:`ROOM_TTL_S` after the room's last change):
``<prefix>C:meta`` (hash: secret hash, closed, revealed, round, version, options),
``<prefix>C:people`` (hash: participant id -> nickname), ``<prefix>C:order`` (list: ids in joining
order), ``<prefix>C:names`` (set: nicknames taken), ``<prefix>C:questions`` (hash: round -> question
JSON), ``<prefix>C:answers:<round>`` (hash: participant id -> option). ``<prefix>rooms`` is a sorted
set of live rooms by deadline, for the limit on rooms. The scripts build answer keys from the prefix,
so the store suits a single Redis server (or a cluster with every key of a room on one slot).

When Redis does not answer (restarting, loading its append-only file, the network gone) the client
retries with backoff for a few seconds (:data:`RETRIES`), so a short blip heals inside the call;
past that every method raises :class:`~rooms.rules.StoreUnavailable`, which pages show while their
next poll tries again. An answer and a join are safe to run twice (an answer is set, not added; a
participant id already in the room keeps its nickname), so their retry after a lost reply changes
nothing.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable
from typing import TypeVar

import redis
from redis.backoff import EqualJitterBackoff
from redis.retry import Retry

from rooms.question import Question, parse_question
from rooms.rules import (
    MAX_PARTICIPANTS,
    MAX_ROOMS,
    MAX_ROUNDS,
    NICKNAME_MAX,
    ROOM_TTL_S,
    RoomData,
    RoomError,
    RoomKeys,
    RoomStatus,
    StoreUnavailable,
    clean_nickname,
    new_code,
    normalise_code,
    refuse,
    same_secret,
    secret_hash,
)

PREFIX = "attn:room:"
# Retries of one call while Redis does not answer: waits of 0.1, 0.2, 0.4, then 0.5 s (each plus up to as
# much again at random, so many clients do not retry in step): 2.2 to 4.4 s in all, longer than a Redis
# restart with a modest append-only file takes; then StoreUnavailable.
RETRIES = 6
T = TypeVar("T")


def retrying_client(url: str) -> redis.Redis:
    """A client for ``url`` that retries a refused or dropped connection (and Redis's LOADING reply
    while it reads its append-only file) with backoff (:data:`RETRIES`)."""
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=5,
        socket_connect_timeout=2,
        retry=Retry(EqualJitterBackoff(cap=1.0, base=0.1), RETRIES),
        retry_on_error=[redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError],
    )


def answering(method: Callable[..., T]) -> Callable[..., T]:
    """Redis's connection failures, once the client's retries are spent, become StoreUnavailable."""

    @functools.wraps(method)
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError) as e:  # BusyLoadingError is a ConnectionError
            raise StoreUnavailable() from e

    return call


# Every script starts with the room's meta key in KEYS[1] and ARGV[1] = prefix .. code; it returns
# {"ok", ...} or {reason} (a RoomError reason word). TOUCH refreshes every key of the room.
TOUCH = """
local function touch(room, ttl)
  local last = tonumber(redis.call('HGET', room .. ':meta', 'round') or '0')
  for _, suffix in ipairs({':meta', ':people', ':order', ':names', ':questions'}) do
    redis.call('EXPIRE', room .. suffix, ttl)
  end
  for r = 1, last do redis.call('EXPIRE', room .. ':answers:' .. r, ttl) end
  redis.call('ZADD', KEYS[2], tonumber(redis.call('TIME')[1]) + tonumber(ttl), room)
end
"""
CREATE = (
    TOUCH
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', redis.call('TIME')[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {'rooms'} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'taken'} end
redis.call('HSET', KEYS[1], 'secret', ARGV[3], 'closed', 0, 'revealed', 0, 'round', 0, 'version', 0, 'options', 0)
touch(ARGV[1], ARGV[2])
return {'ok'}
"""
)
JOIN = (
    TOUCH
    + """
local room, ttl = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
local had = redis.call('HGET', room .. ':people', ARGV[4])
if had then return {'ok', had} end
if redis.call('HGET', KEYS[1], 'closed') == '1' then return {'closed'} end
local n = redis.call('HLEN', room .. ':people')
if n >= tonumber(ARGV[3]) then return {'full'} end
local base, stem = ARGV[5], ARGV[6]
if base == '' then base = 'Student ' .. (n + 1); stem = base end
local name, i = base, 2
while redis.call('SISMEMBER', room .. ':names', name) == 1 do name = stem .. ' (' .. i .. ')'; i = i + 1 end
redis.call('HSET', room .. ':people', ARGV[4], name)
redis.call('RPUSH', room .. ':order', ARGV[4])
redis.call('SADD', room .. ':names', name)
touch(room, ttl)
return {'ok', name}
"""
)
ANSWER = (
    TOUCH
    + """
local room, ttl = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
if redis.call('HEXISTS', room .. ':people', ARGV[3]) == 0 then return {'member'} end
local m = redis.call('HMGET', KEYS[1], 'closed', 'round', 'revealed', 'options')
if m[1] == '1' then return {'closed'} end
if m[2] == '0' then return {'no_question'} end
if m[2] ~= ARGV[4] then return {'stale'} end
if m[3] == '1' then return {'revealed'} end
local choice = tonumber(ARGV[5])
if choice < 0 or choice >= tonumber(m[4]) then return {'choice'} end
redis.call('HSET', room .. ':answers:' .. m[2], ARGV[3], choice)
touch(room, ttl)
return {'ok'}
"""
)
TEACHER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
if redis.call('HGET', KEYS[1], 'secret') ~= ARGV[3] then return {'teacher'} end
"""
ASK = (
    TOUCH
    + TEACHER
    + """
local room, ttl = ARGV[1], ARGV[2]
local m = redis.call('HMGET', KEYS[1], 'closed', 'round')
if m[1] == '1' then return {'closed'} end
local r = tonumber(m[2]) + 1
if r > tonumber(ARGV[6]) then return {'rounds'} end
redis.call('HSET', room .. ':questions', r, ARGV[4])
redis.call('HSET', KEYS[1], 'round', r, 'revealed', 0, 'options', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'version', 1)
touch(room, ttl)
return {'ok', r}
"""
)
REVEAL = (
    TOUCH
    + TEACHER
    + """
local m = redis.call('HMGET', KEYS[1], 'closed', 'round')
if m[1] == '1' then return {'closed'} end
if m[2] == '0' then return {'no_question'} end
redis.call('HSET', KEYS[1], 'revealed', 1)
redis.call('HINCRBY', KEYS[1], 'version', 1)
touch(ARGV[1], ARGV[2])
return {'ok'}
"""
)
CLOSE = (
    TOUCH
    + TEACHER
    + """
redis.call('HSET', KEYS[1], 'closed', 1)
redis.call('HINCRBY', KEYS[1], 'version', 1)
touch(ARGV[1], ARGV[2])
return {'ok'}
"""
)
STATUS = """
local room = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
local m = redis.call('HMGET', KEYS[1], 'closed', 'round', 'revealed', 'version', 'options')
local answers = room .. ':answers:' .. m[2]
local mine = false
if ARGV[3] ~= '' then mine = redis.call('HGET', answers, ARGV[3]) end
return {'ok', m[1], m[2], m[3], m[4], m[5], redis.call('HLEN', room .. ':people'), redis.call('HVALS', answers), mine}
"""


class RedisStore:
    """Rooms in Redis; thread-safe (redis-py's connection pool), any number of processes."""

    def __init__(
        self, client: redis.Redis, *, ttl_s: int = ROOM_TTL_S, max_rooms: int = MAX_ROOMS, prefix: str = PREFIX
    ):
        self.r, self.ttl_s, self.max_rooms, self.prefix = client, int(ttl_s), max_rooms, prefix
        self._scripts = {
            name: client.register_script(src)
            for name, src in dict(
                create=CREATE, join=JOIN, answer=ANSWER, ask=ASK, reveal=REVEAL, close=CLOSE, status=STATUS
            ).items()
        }

    @classmethod
    def from_url(cls, url: str, **kwargs) -> RedisStore:
        return cls(retrying_client(url), **kwargs)

    def _room(self, code: str) -> str:
        return self.prefix + normalise_code(code)

    def _run(self, name: str, code: str, *args: object) -> list:
        room = self._room(code)
        out = self._scripts[name](keys=[room + ":meta", self.prefix + "rooms"], args=[room, self.ttl_s, *args])
        if out[0] != "ok":
            raise refuse(out[0])
        return out

    @answering
    def create_room(self) -> RoomKeys:
        for _ in range(20):  # a taken code (1 in 10^9 per live room) draws another
            code, secret = new_code(), secrets.token_urlsafe(24)
            try:
                self._run("create", code, secret_hash(secret), self.max_rooms)
            except RoomError as e:
                if e.reason != "taken":
                    raise
            else:
                return RoomKeys(code, secret)
        raise refuse("rooms")

    @answering
    def get(self, code: str, member: str | None = None) -> RoomStatus:
        _, closed, rnd, revealed, version, options, people, answers, mine = self._run("status", code, member or "")
        counts = [0] * int(options)
        for choice in answers:
            counts[int(choice)] += 1
        return RoomStatus(
            normalise_code(code),
            closed == "1",
            int(rnd),
            revealed == "1",
            int(people),
            len(answers),
            tuple(counts),
            int(mine) if mine else None,
            int(version),
        )

    @answering
    def question(self, code: str, round: int) -> Question:
        room = self._room(code)
        meta, text = self.r.pipeline().exists(room + ":meta").hget(room + ":questions", round).execute()
        if not meta:
            raise refuse("not_found")
        if text is None:
            raise refuse("no_question")
        return parse_question(text)

    @answering
    def join(self, code: str, nickname: str = "") -> tuple[str, str]:
        name = clean_nickname(nickname)
        member = secrets.token_urlsafe(16)
        out = self._run("join", code, MAX_PARTICIPANTS, member, name, name[: NICKNAME_MAX - 5])
        return member, out[1]

    @answering
    def nickname(self, code: str, member: str) -> str:
        room = self._room(code)
        meta, name = self.r.pipeline().exists(room + ":meta").hget(room + ":people", member).execute()
        if not meta:
            raise refuse("not_found")
        if name is None:
            raise refuse("member")
        return name

    @answering
    def set_question(self, code: str, secret: str, question: Question) -> int:
        out = self._run("ask", code, secret_hash(secret or ""), question.to_json(), len(question.options), MAX_ROUNDS)
        return int(out[1])

    @answering
    def answer(self, code: str, member: str, round: int, choice: int) -> None:
        self._run("answer", code, member, int(round), int(choice))

    @answering
    def reveal(self, code: str, secret: str) -> None:
        self._run("reveal", code, secret_hash(secret or ""))

    @answering
    def close(self, code: str, secret: str) -> None:
        self._run("close", code, secret_hash(secret or ""))

    @answering
    def is_teacher(self, code: str, secret: str | None) -> bool:
        stored = self.r.hget(self._room(code) + ":meta", "secret")
        if stored is None:
            raise refuse("not_found")
        return same_secret(secret, stored)

    @answering
    def data(self, code: str) -> RoomData:
        room = self._room(code)
        p = self.r.pipeline()
        p.hgetall(room + ":meta").lrange(room + ":order", 0, -1).hgetall(room + ":people").hgetall(room + ":questions")
        meta, order, people, questions = p.execute()
        if not meta:
            raise refuse("not_found")
        n = int(meta["round"])
        p = self.r.pipeline()
        for r in range(1, n + 1):
            p.hgetall(f"{room}:answers:{r}")
        answers = p.execute() if n else []
        return RoomData(
            normalise_code(code),
            meta["closed"] == "1",
            meta["revealed"] == "1",
            {m: people[m] for m in order if m in people},
            [parse_question(questions[str(r)]) for r in range(1, n + 1)],
            [{m: int(c) for m, c in a.items()} for a in answers],
        )


__all__ = ["RedisStore", "RoomError"]
