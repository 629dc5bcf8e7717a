#!/usr/bin/env python3
"""An electronic board written from the proto alone (issue 38: the contract, not our own
client, is what is tested).

Everything here comes from proto/draughts/arbiter/v1/arbiter.proto's comments: bind with
the board's token, then per ply lift, place on each landing square, release, lift each
captured piece in capture order, press the clock; a heartbeat every second while nothing
else is sent; when the stream breaks (UNAVAILABLE "server shutting down", a refused
connection), reconnect with backoff and bind again with `resume_from_seq` = the last seq
seen, read the events replayed after the bound answer, and go on from the bound Game's
move list (`move_count`): a move the judge has is never sent again. PERMISSION_DENIED,
NOT_FOUND, ABORTED end the board (exit 1).

Stubs are generated from the proto at test time (grpcio-tools) into --stubs.

    board_client.py --stubs DIR --server HOST:PORT --token T --game ID \
        --plies '[{"side": 1, "from": 22, "landings": [18], "captured": []}, ...]'

Prints `bound <move_count> <last_seq>`, `replayed <n> <kinds,...>` after a rebind and
`played <ply number>` after each ply's press is acknowledged; exit 0 when every ply is
in the judge's move list.
"""

import argparse
import json
import queue
import random
import sys
import time

import grpc

FATAL = {
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INVALID_ARGUMENT,
}


class Gone(Exception):
    """The stream broke; `fatal` when the board must give up."""

    def __init__(self, why, fatal=False):
        super().__init__(why)
        self.fatal = fatal


class Board:
    def __init__(self, pb, grpc_pb, args):
        self.pb = pb
        self.grpc_pb = grpc_pb
        self.args = args
        self.last_seq = 0
        self.next_id = 0
        self.channel = None
        self.out = None
        self.feedback = None
        self.last_sent = time.monotonic()

    # -- the stream ----------------------------------------------------------------------
    def open(self):
        if self.channel is not None:
            self.channel.close()
        self.channel = grpc.insecure_channel(self.args.server)
        stub = self.grpc_pb.BoardServiceStub(self.channel)
        self.out = queue.Queue()
        self.feedback = stub.Connect(
            iter(self.out.get, None),
            metadata=[("authorization", "Bearer " + self.args.token)],
        )

    def send(self, **kind):
        self.next_id += 1
        msg = self.pb.BoardMessage(
            message_id=self.next_id,
            board_time_ms=int(time.monotonic() * 1000),
            **kind,
        )
        self.out.put(msg)
        self.last_sent = time.monotonic()
        return self.next_id

    def recv(self):
        try:
            fb = next(self.feedback)
        except grpc.RpcError as e:
            raise Gone(f"{e.code().name}: {e.details()}", e.code() in FATAL) from None
        except StopIteration:
            raise Gone("the server ended the stream") from None
        if fb.WhichOneof("kind") == "event":
            self.last_seq = max(self.last_seq, fb.event.seq)
        return fb

    def answer(self, mid):
        """Waits for the ack or refusal of message `mid`."""
        while True:
            fb = self.recv()
            kind = fb.WhichOneof("kind")
            if fb.message_id == mid and kind == "ack":
                self.last_seq = max(self.last_seq, fb.ack.last_seq)
                return None
            if fb.message_id == mid and kind == "rejected":
                return fb.rejected

    def bind(self):
        resume = self.last_seq
        mid = self.send(
            bind=self.pb.BindBoard(
                game_id=self.args.game,
                board_id=self.args.board_id,
                resume_from_seq=resume,
            )
        )
        while True:
            fb = self.recv()
            kind = fb.WhichOneof("kind")
            if kind == "bound":
                game = fb.bound
                break
            if kind == "rejected" and fb.message_id == mid:
                code = fb.rejected.code
                raise Gone(f"bind: {code}: {fb.rejected.message}", code != "UNAVAILABLE")
        print(f"bound {game.move_count} {game.last_seq}", flush=True)
        if resume > 0 and game.last_seq > resume:
            # The events after resume_from_seq follow the bound answer, before any new one.
            kinds = []
            deadline = time.monotonic() + 5
            while self.last_seq < game.last_seq:
                if time.monotonic() > deadline:
                    # Clocks come every second while one runs, so this is checked.
                    raise Gone(f"the events after seq {resume} were not replayed", True)
                fb = self.recv()
                if fb.WhichOneof("kind") == "event":
                    kinds.append(fb.event.WhichOneof("kind"))
            print(f"replayed {len(kinds)} {','.join(kinds)}", flush=True)
        self.last_seq = max(self.last_seq, game.last_seq)
        return game

    def connect(self):
        """Opens and binds, with backoff (100 ms doubling to 2 s, jittered)."""
        delay = 0.1
        deadline = time.monotonic() + 60
        while True:
            try:
                self.open()
                return self.bind()
            except Gone as e:
                if e.fatal or time.monotonic() > deadline:
                    raise
                print(f"retry: {e}", flush=True)
            time.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, 2.0)

    def heartbeat_for(self, seconds):
        """A player thinking: a heartbeat every second (the answers are read later)."""
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if time.monotonic() - self.last_sent >= 1.0:
                self.send(heartbeat=self.pb.BoardHeartbeat())
            time.sleep(min(0.1, max(0.0, until - time.monotonic())))

    # -- a ply -----------------------------------------------------------------------------
    def step(self, **kind):
        refused = self.answer(self.send(**kind))
        if refused is not None:
            raise Gone(f"refused: {refused.code}: {refused.message}", True)

    def ply(self, p):
        sq = self.pb.BoardSquare
        self.step(lift=sq(square=p["from"]))
        for landing in p["landings"][:-1]:
            self.step(place=sq(square=landing))
        self.step(release=sq(square=p["landings"][-1]))
        for captured in p["captured"]:
            # Removing a captured piece is a lift.
            self.step(lift=sq(square=captured))
        self.step(clock_press=self.pb.BoardClockPress(side=p["side"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stubs", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--game", required=True)
    ap.add_argument("--board-id", default="py-board")
    ap.add_argument("--plies", required=True)
    ap.add_argument("--pause-ms", type=int, default=0)
    args = ap.parse_args()
    sys.path.insert(0, args.stubs)
    from draughts.arbiter.v1 import arbiter_pb2 as pb  # noqa: E402
    from draughts.arbiter.v1 import arbiter_pb2_grpc as grpc_pb  # noqa: E402

    plies = json.loads(args.plies)
    board = Board(pb, grpc_pb, args)
    try:
        game = board.connect()
        done = game.move_count
        while done < len(plies):
            board.heartbeat_for(args.pause_ms / 1000.0)
            try:
                board.ply(plies[done])
                done += 1
                print(f"played {done}", flush=True)
            except Gone as e:
                if e.fatal:
                    raise
                print(f"lost: {e}", flush=True)
                # Go on from the judge's move list: a ply it has is not sent again; one
                # it does not have is sent from its start.
                done = board.connect().move_count
    except Gone as e:
        print(f"gave up: {e}", flush=True)
        return 1
    board.out.put(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
