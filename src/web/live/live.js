// The live board page (src/web/live.rs): every board of an event's round, followed over
// grpc-web (`draughts.arbiter.v1.BroadcastService/WatchEvent`) on the page's own origin.
//
// The API is read from the server's FileDescriptorSet at run time (no generated code);
// the stream's events are folded per game into what the page draws. After a drop the
// stream is resumed from the `cursor` of the last message; a cursor the server refuses
// (INVALID_ARGUMENT) starts the page over from the round's first event.

import {
  Code,
  ConnectError,
  FileDescriptorSetSchema,
  createClient,
  createFileRegistry,
  createGrpcWebTransport,
  fromBinary,
  timestampMs,
} from "./connect-protobuf.js";

const SVG = "http://www.w3.org/2000/svg";

// Enum values of arbiter.proto.
const SIDE_WHITE = 1;
const SIDE_BLACK = 2;
const STATUS = { 1: "not started", 2: "playing", 3: "paused", 4: "finished" };
const CLOCK_RUNNING = 2;
const RESULT = {
  1: ["1–0", "White wins"],
  2: ["0–1", "Black wins"],
  3: ["½–½", "Draw"],
  4: ["0–0", "Both lose"],
  5: ["—", "Annulled"],
};
const REASON = {
  1: "resignation",
  2: "no pieces left",
  3: "no legal move",
  4: "time forfeit",
  5: "draw agreed",
  6: "repetition",
  7: "move-count rule",
  8: "arbiter's decision",
  9: "penalty",
  10: "move limit (“Time!”)",
  11: "flag fell during an incorrect claim",
  12: "touch penalty",
  13: "corner filled",
  14: "start squares not left",
};
const IRREGULARITY = {
  1: "move out of turn",
  2: "illegal move",
  3: "touch-move",
  4: "wrong removal of captured pieces",
  5: "incomplete capture",
  6: "clock pressed without a move",
  7: "clock pressed before the removal",
  8: "“I adjust” out of turn",
  9: "touched a piece that cannot move",
  10: "board does not match the position",
  11: "a piece put wrongly while the board caught up",
};
const IRREGULARITY_RULING = { 1: "stands", 2: "corrected" };
const CLAIM_RULING = { 1: "correct", 2: "incorrect" };

// Variant number -> name, board, notation. Boards: diagonal boards use the dark squares
// of a grid whose top-left square is light; numbers run row by row from the top left
// (right to left on the mirrored Italian board); algebraic files run from the left.
const D8 = { w: 8, h: 8, diag: true };
const D10 = { w: 10, h: 10, diag: true };
const D108 = { w: 10, h: 8, diag: true };
const O8 = { w: 8, h: 8, diag: false };
const VARIANTS = {
  1: { name: "Russian", geo: D8, alg: true },
  2: { name: "International", geo: D10, alg: false },
  3: { name: "English", geo: D8, alg: false },
  4: { name: "Brazilian", geo: D8, alg: false },
  5: { name: "Pool", geo: D8, alg: false },
  6: { name: "Italian", geo: D8, alg: false, mirrored: true },
  7: { name: "Giveaway", geo: D8, alg: true },
  8: { name: "Antidraughts", geo: D10, alg: false },
  9: { name: "Turkish", geo: O8, alg: true },
  10: { name: "Frisian", geo: D10, alg: false },
  11: { name: "Towers", geo: D8, alg: true },
  12: { name: "Russian 10×8", geo: D108, alg: true },
  13: { name: "Diagonal", geo: D8, alg: true },
  14: { name: "Corners", geo: O8, alg: true },
};
const UNKNOWN_VARIANT = { name: "draughts", geo: D8, alg: false };

// ---------------------------------------------------------------------------
// Board geometry
// ---------------------------------------------------------------------------

function variantOf(v) {
  return VARIANTS[v] || UNKNOWN_VARIANT;
}

// Display cell {x, y} (x from the left, y from the top, as White sees the board) of a
// square number, or null.
function cellOfNumber(n, variant) {
  const { w, h, diag } = variant.geo;
  const perRow = diag ? w / 2 : w;
  if (!Number.isInteger(n) || n < 1 || n > perRow * h) return null;
  const i = n - 1;
  const r = Math.floor(i / perRow);
  let k = i % perRow;
  if (variant.mirrored) k = perRow - 1 - k;
  const c = diag ? 2 * k + (r % 2 === 0 ? 1 : 0) : k;
  return { x: variant.mirrored ? w - 1 - c : c, y: r };
}

// Display cell of an algebraic square ("c3"), or null.
function cellOfName(name, variant) {
  const m = /^([a-z])(\d+)$/i.exec(name);
  if (!m) return null;
  const { w, h } = variant.geo;
  const x = m[1].toLowerCase().charCodeAt(0) - 97;
  const y = h - Number(m[2]);
  if (x < 0 || x >= w || y < 0 || y >= h) return null;
  return isPlayable(x, y, variant) ? { x, y } : null;
}

function isPlayable(x, y, variant) {
  if (!variant.geo.diag) return true;
  const c = variant.mirrored ? variant.geo.w - 1 - x : x;
  return (y + c) % 2 === 1;
}

function numberOfCell(x, y, variant) {
  const { w, diag } = variant.geo;
  const perRow = diag ? w / 2 : w;
  const c = variant.mirrored ? w - 1 - x : x;
  let k = diag ? Math.floor(c / 2) : c;
  if (variant.mirrored) k = perRow - 1 - k;
  return y * perRow + k + 1;
}

// FEN as the server writes it: "W:W21-32:B1-12", "B:WK4,18:B1-3", "W:Wc3(bw),Kd4:Bf6".
// Returns { turn: SIDE_*, pieces: Map("x,y" -> {white, king, beneath: [white...]}) }.
function parseFen(fen, variant) {
  const pieces = new Map();
  let text = (fen || "").trim().replace(/^"|"$/g, "").trim();
  if (text.endsWith(".")) text = text.slice(0, -1);
  const fields = text.split(":");
  const turn = fields[0].trim().toUpperCase() === "B" ? SIDE_BLACK : SIDE_WHITE;
  for (const raw of fields.slice(1)) {
    const field = raw.trim();
    const colour = field[0];
    if (colour !== "W" && colour !== "B") continue;
    for (let item of field.slice(1).split(",")) {
      item = item.trim();
      if (!item) continue;
      let king = false;
      if (item[0] === "K" || item[0] === "k") {
        king = true;
        item = item.slice(1);
      }
      let beneath = [];
      const stack = /^(.*)\(([wb]*)\)$/i.exec(item);
      if (stack) {
        item = stack[1];
        beneath = [...stack[2].toLowerCase()].map((c) => c === "w");
      }
      const cells = [];
      const range = /^(\d+)-(\d+)$/.exec(item);
      if (range) {
        for (let n = Number(range[1]); n <= Number(range[2]) && n - Number(range[1]) < 100; n++) {
          cells.push(cellOfNumber(n, variant));
        }
      } else if (/^\d+$/.test(item)) {
        cells.push(cellOfNumber(Number(item), variant));
      } else {
        cells.push(cellOfName(item, variant));
      }
      for (const cell of cells) {
        if (cell) pieces.set(`${cell.x},${cell.y}`, { white: colour === "W", king, beneath });
      }
    }
  }
  return { turn, pieces };
}

// ---------------------------------------------------------------------------
// The fold: the stream's events into one state per game
// ---------------------------------------------------------------------------

const games = new Map();

function newGame(id) {
  return {
    id,
    variant: 0,
    white: null,
    black: null,
    event: "",
    round: "",
    board: 0,
    timeControl: "",
    delayMs: 0,
    delayDisproved: false,
    startFen: "",
    fen: "",
    moves: [],
    lastMove: null,
    clock: null,
    status: 1,
    result: 0,
    reason: 0,
    rule: "",
    explanation: "",
    notes: [],
    lastSeq: 0,
    drawOffer: 0,
  };
}

function num(v) {
  return v === undefined || v === null ? 0 : Number(v);
}

function sideName(s) {
  return s === SIDE_WHITE ? "White" : s === SIDE_BLACK ? "Black" : "";
}

function clockOf(snapshot) {
  if (!snapshot) return null;
  return {
    state: snapshot.state,
    running: snapshot.runningSide,
    white: num(snapshot.whiteMs),
    black: num(snapshot.blackMs),
    readAt: snapshot.readAt ? timestampMs(snapshot.readAt) : Date.now(),
  };
}

function note(g, ev, kind, title, text, rule) {
  g.notes.push({ seq: num(ev.seq), kind, title, text: text || "", rule: rule || ev.rule || "" });
}

function applyEvent(ev) {
  const id = ev.gameId;
  if (!id) return;
  let g = games.get(id);
  if (!g) {
    g = newGame(id);
    games.set(id, g);
  }
  const seq = num(ev.seq);
  const k = ev.kind;
  if (k.case === "resync") {
    applySnapshot(g, k.value.game, seq);
    return;
  }
  // Folding is idempotent: an event already folded in is not folded again.
  if (seq !== 0 && seq <= g.lastSeq) return;
  g.lastSeq = seq;
  if (ev.serverTime && g.delayMs > 0) {
    // An event that came sooner than the delay: this caller sees the game live.
    const lag = Date.now() - timestampMs(ev.serverTime);
    if (lag < g.delayMs - 1500) g.delayDisproved = true;
  }
  const v = k.value;
  switch (k.case) {
    case "gameCreated":
      g.variant = v.variant;
      g.white = v.white || null;
      g.black = v.black || null;
      g.event = v.event;
      g.round = v.round;
      g.board = v.board;
      g.timeControl = v.timeControl;
      g.delayMs = num(v.settings && v.settings.broadcastDelayMs);
      g.startFen = v.startFen;
      g.fen = v.startFen;
      g.status = 1;
      break;
    case "gameStarted":
      g.status = 2;
      g.clock = clockOf(v.clock) || g.clock;
      break;
    case "movePlayed": {
      g.moves.push({
        seq,
        number: v.moveNumber,
        side: v.side,
        notation: v.move ? v.move.notation : "?",
      });
      g.fen = v.fenAfter;
      g.lastMove = v.move ? { path: [...v.move.path], captured: [...v.move.captured] } : null;
      if (v.clock) g.clock = clockOf(v.clock);
      g.drawOffer = 0;
      break;
    }
    case "clockPressed":
    case "clockState":
    case "flagFell":
      if (v.clock) g.clock = clockOf(v.clock);
      if (k.case === "flagFell") note(g, ev, "flag", `${sideName(v.side)}'s flag fell`, "");
      break;
    case "clocksPaused":
      g.status = 3;
      if (v.clock) g.clock = clockOf(v.clock);
      note(g, ev, "arbiter", "Clocks paused", v.reason);
      break;
    case "clocksResumed":
      g.status = 2;
      if (v.clock) g.clock = clockOf(v.clock);
      note(g, ev, "arbiter", "Clocks resumed", v.reason);
      break;
    case "clockAdjusted": {
      if (v.clock) g.clock = clockOf(v.clock);
      const c = v.change;
      let what = "clock adjusted";
      if (c.case === "setRemainingMs") what = `set to ${formatClock(num(c.value))}`;
      if (c.case === "addMs") {
        const ms = num(c.value);
        what = `${ms >= 0 ? "+" : "−"}${formatClock(Math.abs(ms))}`;
      }
      note(g, ev, "arbiter", `${sideName(v.side)}'s clock ${what}`, v.reason);
      break;
    }
    case "outageRecorded":
      if (v.clock) g.clock = clockOf(v.clock);
      note(g, ev, "system", "Service outage", `${formatDuration(num(v.durationMs))} down${v.charged ? ", charged to the side on move" : ""}`);
      break;
    case "positionSet":
      g.fen = v.fen;
      g.lastMove = null;
      note(g, ev, "arbiter", "Position set by the arbiter", v.reason);
      break;
    case "warningIssued":
      note(g, ev, "warning", `Warning to ${sideName(v.side)}${v.count > 1 ? ` (${v.count})` : ""}`, v.reason);
      break;
    case "irregularityFlagged":
      note(g, ev, "irregularity", `Irregularity by ${sideName(v.side)}: ${IRREGULARITY[v.kind] || "irregularity"}`, v.description);
      break;
    case "irregularityRuled":
      if (v.fenAfter) g.fen = v.fenAfter;
      note(g, ev, "arbiter", v.ruling ? `Ruling: the irregularity ${IRREGULARITY_RULING[v.ruling] || ""}` : "Irregularity resolved on the board", v.reason);
      break;
    case "drawOffered":
      g.drawOffer = v.side;
      break;
    case "drawOfferDeclined":
    case "drawOfferAccepted":
      g.drawOffer = 0;
      break;
    case "drawClaimed":
      note(g, ev, "claim", `${sideName(v.side)} claims a draw`, v.writtenMove && v.writtenMove.notation ? `written move ${v.writtenMove.notation}` : "");
      break;
    case "claimDecided":
      note(g, ev, "arbiter", `Draw claim ${CLAIM_RULING[v.ruling] || "decided"}`, v.reason);
      break;
    case "drawConditionReached":
      if (v.mode === 3) note(g, ev, "arbiter", "Draw rule referred to the arbiter", v.description);
      break;
    case "timeCalled":
      note(g, ev, "arbiter", `“Time!” called on ${sideName(v.side)}`, "");
      break;
    case "fortyMoveCountStarted":
      note(g, ev, "arbiter", `40-move count started for ${sideName(v.side)}`, "");
      break;
    case "gameFinished":
      g.status = 4;
      g.result = v.result;
      g.reason = v.reason;
      g.rule = ev.rule;
      g.explanation = v.explanation;
      g.drawOffer = 0;
      if (v.clock) g.clock = clockOf(v.clock);
      break;
    default:
      break;
  }
}

// A `Resync` (or a fresh start): the game as the server shows it at `seq`.
function applySnapshot(g, game, seq) {
  if (!game) return;
  g.variant = game.variant;
  g.white = game.white || null;
  g.black = game.black || null;
  g.event = game.event;
  g.round = game.round;
  g.board = game.board;
  g.timeControl = game.timeControl;
  g.delayMs = num(game.settings && game.settings.broadcastDelayMs);
  g.startFen = game.startFen;
  g.fen = game.fen;
  g.status = game.status;
  g.result = game.result;
  g.reason = game.resultReason;
  g.rule = game.rule;
  g.moves = game.moves.map((m) => ({
    seq: num(m.seq),
    number: m.moveNumber,
    side: m.side,
    notation: m.move ? m.move.notation : "?",
  }));
  const last = game.moves[game.moves.length - 1];
  g.lastMove = last && last.move && last.fenAfter === game.fen ? { path: [...last.move.path], captured: [...last.move.captured] } : null;
  g.clock = clockOf(game.clock);
  g.drawOffer = game.pendingDrawOffer ? game.pendingDrawOffer.side : 0;
  // Warnings come with the snapshot; the other notes already seen stay (they happened).
  const warnings = game.warnings.map((w) => ({
    seq: num(w.seq),
    kind: "warning",
    title: `Warning to ${sideName(w.side)}`,
    text: w.reason,
    rule: w.rule,
  }));
  g.notes = g.notes
    .filter((n) => n.kind !== "warning" && n.seq <= seq)
    .concat(warnings)
    .sort((a, b) => a.seq - b.seq);
  g.lastSeq = seq || num(game.lastSeq);
}

// ---------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

function formatClock(ms) {
  const neg = ms < 0;
  ms = Math.max(0, ms);
  if (ms < 10000 && !neg) return (Math.floor(ms / 100) / 10).toFixed(1);
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return `${h > 0 ? `${h}:` : ""}${mm}:${String(s).padStart(2, "0")}`;
}

// The time the page shows: now, or for a delayed public broadcast, the delay ago.
function viewNow(g) {
  return Date.now() - (g.delayMs > 0 && !g.delayDisproved ? g.delayMs : 0);
}

function remaining(g, side) {
  const c = g.clock;
  if (!c) return null;
  let ms = side === SIDE_WHITE ? c.white : c.black;
  if (c.state === CLOCK_RUNNING && c.running === side && g.status === 2) {
    ms -= Math.max(0, viewNow(g) - c.readAt);
  }
  return ms;
}

function untimed(g) {
  return !g.timeControl || g.timeControl === "-" || (g.clock && g.clock.white < 0 && g.clock.black < 0 && g.status !== 4);
}

const PIECE_R = 38;

function drawPiece(group, cx, cy, piece) {
  const colour = piece.white ? "w" : "b";
  const below = piece.beneath.slice(0, 4);
  // Towers: the pieces beneath the top, drawn as discs under it.
  for (let i = below.length; i >= 1; i--) {
    const c = below[i - 1] ? "w" : "b";
    group.appendChild(svg("circle", { cx, cy: cy + 6 * i, r: PIECE_R, class: `disc ${c}` }));
  }
  group.appendChild(svg("circle", { cx: cx + 2, cy: cy + 5, r: PIECE_R, class: "shadow" }));
  group.appendChild(svg("circle", { cx, cy, r: PIECE_R, class: `disc ${colour}` }));
  group.appendChild(svg("circle", { cx, cy, r: PIECE_R - 9, class: `ring ${colour}` }));
  if (piece.king) {
    const crown = svg("path", {
      d: "M-19 9 L-23 -11 L-10 -2 L0 -17 L10 -2 L23 -11 L19 9 Z M-19 13 L19 13 L19 18 L-19 18 Z",
      transform: `translate(${cx} ${cy})`,
      class: `crown ${colour}`,
    });
    group.appendChild(crown);
  }
  if (piece.beneath.length > 0) {
    const t = svg("text", { x: cx + 30, y: cy - 26, class: "stack" });
    t.textContent = String(piece.beneath.length + 1);
    group.appendChild(t);
  }
}

function drawBoard(g) {
  const variant = variantOf(g.variant);
  const { w, h } = variant.geo;
  const S = 100;
  const root = svg("svg", { viewBox: `0 0 ${w * S} ${h * S}`, class: "board", role: "img" });
  const position = parseFen(g.fen, variant);
  root.setAttribute("aria-label", `${variant.name} position ${g.fen}`);
  const last = new Map();
  if (g.lastMove && g.lastMove.path.length > 0) {
    const path = g.lastMove.path;
    path.forEach((n, i) => {
      const c = cellOfNumber(n, variant);
      if (c) last.set(`${c.x},${c.y}`, i === 0 ? "from" : i === path.length - 1 ? "to" : "via");
    });
  }
  const squares = svg("g", {});
  const labels = svg("g", { class: "labels" });
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dark = variant.geo.diag ? isPlayable(x, y, variant) : (x + y) % 2 === 1;
      const key = `${x},${y}`;
      const rect = svg("rect", { x: x * S, y: y * S, width: S, height: S, class: dark ? "sq dark" : "sq light" });
      squares.appendChild(rect);
      if (last.has(key)) {
        squares.appendChild(svg("rect", { x: x * S, y: y * S, width: S, height: S, class: `hl ${last.get(key)}` }));
      }
      if (!variant.alg && isPlayable(x, y, variant)) {
        const t = svg("text", { x: x * S + 6, y: y * S + 20, class: "num" });
        t.textContent = String(numberOfCell(x, y, variant));
        labels.appendChild(t);
      }
      if (variant.alg && y === h - 1) {
        const t = svg("text", { x: x * S + S - 8, y: y * S + S - 7, class: `coord ${dark ? "on-dark" : "on-light"}`, "text-anchor": "end" });
        t.textContent = String.fromCharCode(97 + x);
        labels.appendChild(t);
      }
      if (variant.alg && x === 0) {
        const t = svg("text", { x: 6, y: y * S + 22, class: `coord ${dark ? "on-dark" : "on-light"}` });
        t.textContent = String(h - y);
        labels.appendChild(t);
      }
    }
  }
  root.appendChild(squares);
  root.appendChild(labels);
  const pieces = svg("g", { class: "pieces" });
  for (const [key, piece] of position.pieces) {
    const [x, y] = key.split(",").map(Number);
    const group = svg("g", {
      class: `piece ${piece.white ? "white" : "black"} ${piece.king ? "king" : "man"}`,
      "data-cell": key,
    });
    drawPiece(group, x * S + S / 2, y * S + S / 2 - 2, piece);
    pieces.appendChild(group);
  }
  root.appendChild(pieces);
  return { root, turn: position.turn };
}

function playerRow(g, side, turn) {
  const p = side === SIDE_WHITE ? g.white : g.black;
  const row = el("div", `player ${side === SIDE_WHITE ? "white" : "black"}`);
  row.appendChild(el("span", `dot ${side === SIDE_WHITE ? "w" : "b"}`));
  const who = el("div", "who");
  who.appendChild(el("span", "name", (p && p.name) || (side === SIDE_WHITE ? "White" : "Black")));
  const meta = [p && p.federation, p && p.rating ? String(p.rating) : ""].filter(Boolean).join(" · ");
  if (meta) who.appendChild(el("span", "meta", meta));
  row.appendChild(who);
  if (g.drawOffer === side && g.status !== 4) row.appendChild(el("span", "offer", "offers a draw"));
  const clock = el("span", "clock");
  clock.dataset.side = side === SIDE_WHITE ? "white" : "black";
  if (turn === side && g.status !== 4) row.classList.add("to-move");
  row.appendChild(clock);
  return row;
}

function updateClocks(card, g) {
  for (const clock of card.querySelectorAll(".clock")) {
    const side = clock.dataset.side === "white" ? SIDE_WHITE : SIDE_BLACK;
    if (untimed(g)) {
      clock.textContent = "—";
      clock.dataset.ms = "";
      clock.className = "clock untimed";
      continue;
    }
    const ms = remaining(g, side);
    if (ms === null) {
      clock.textContent = g.timeControl || "—";
      clock.dataset.ms = "";
      clock.className = "clock waiting";
      continue;
    }
    clock.textContent = formatClock(ms);
    clock.dataset.ms = String(Math.round(ms));
    const running = g.clock.state === CLOCK_RUNNING && g.clock.running === side && g.status === 2;
    clock.className = `clock${running ? " running" : ""}${ms < 30000 ? " low" : ""}${ms <= 0 ? " flag" : ""}`;
  }
}

function scoreSheet(g) {
  const list = el("ol", "moves");
  const rows = new Map();
  const variant = variantOf(g.variant);
  // The first column is the side that moves first from the start position.
  const first = g.startFen ? parseFen(g.startFen, variant).turn : SIDE_WHITE;
  for (const m of g.moves) {
    let row = rows.get(m.number);
    if (!row) {
      row = el("li", "row");
      row.appendChild(el("span", "no", `${m.number}.`));
      row.appendChild(el("span", "mv empty", "…"));
      row.appendChild(el("span", "mv empty", ""));
      rows.set(m.number, row);
      list.appendChild(row);
    }
    const cell = row.children[m.side === first ? 1 : 2];
    cell.className = "mv";
    cell.textContent = m.notation;
    cell.dataset.seq = String(m.seq);
  }
  const cells = list.querySelectorAll(".mv[data-seq]");
  if (cells.length) cells[cells.length - 1].classList.add("last");
  return list;
}

function resultLine(g) {
  const box = el("div", "result");
  if (g.status !== 4 || !g.result) return null;
  const [score, text] = RESULT[g.result] || ["", ""];
  box.appendChild(el("span", "score", score));
  const words = [text, REASON[g.reason]].filter(Boolean).join(" · ");
  box.appendChild(el("span", "why", words));
  if (g.rule) box.appendChild(el("span", "rule", g.rule));
  if (g.explanation) box.appendChild(el("span", "explanation", g.explanation));
  return box;
}

function notesList(g) {
  if (g.notes.length === 0) return null;
  const list = el("ul", "notes");
  for (const n of g.notes) {
    const item = el("li", `note ${n.kind}`);
    item.appendChild(el("span", "title", n.title));
    if (n.text) item.appendChild(el("span", "text", n.text));
    if (n.rule) item.appendChild(el("span", "rule", n.rule));
    list.appendChild(item);
  }
  return list;
}

const cards = new Map();

function renderGame(g) {
  let card = cards.get(g.id);
  if (!card) {
    card = el("section", "game");
    card.dataset.gameId = g.id;
    cards.set(g.id, card);
  }
  card.replaceChildren();
  const variant = variantOf(g.variant);
  card.dataset.board = String(g.board);
  card.dataset.status = STATUS[g.status] || "";
  const head = el("div", "head");
  head.appendChild(el("span", "boardno", g.board ? `Board ${g.board}` : g.id));
  const info = [variant.name, g.timeControl && g.timeControl !== "-" ? g.timeControl : "untimed"];
  if (!round && g.round) info.unshift(`Round ${g.round}`);
  head.appendChild(el("span", "info", info.join(" · ")));
  if (g.delayMs > 0 && !g.delayDisproved) {
    head.appendChild(el("span", "delay", `delayed ${formatDelay(g.delayMs)}`));
  }
  head.appendChild(el("span", `state s${g.status}`, STATUS[g.status] || ""));
  card.appendChild(head);

  const body = el("div", "body");
  const left = el("div", "left");
  const drawn = drawBoard(g);
  left.appendChild(playerRow(g, SIDE_BLACK, drawn.turn));
  const frame = el("div", "frame");
  frame.appendChild(drawn.root);
  left.appendChild(frame);
  left.appendChild(playerRow(g, SIDE_WHITE, drawn.turn));
  body.appendChild(left);

  const right = el("div", "right");
  const result = resultLine(g);
  if (result) right.appendChild(result);
  right.appendChild(el("h3", "", "Moves"));
  const sheet = scoreSheet(g);
  if (g.moves.length === 0) sheet.appendChild(el("li", "none", "no moves yet"));
  right.appendChild(sheet);
  const notes = notesList(g);
  if (notes) {
    right.appendChild(el("h3", "", "Arbiter's notes"));
    right.appendChild(notes);
  }
  body.appendChild(right);
  card.appendChild(body);
  updateClocks(card, g);
  // Keep the latest moves in view.
  requestAnimationFrame(() => {
    sheet.scrollTop = sheet.scrollHeight;
  });
  return card;
}

function formatDuration(ms) {
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return formatClock(ms);
}

function formatDelay(ms) {
  if (ms >= 3600000 && ms % 3600000 === 0) return `${ms / 3600000} h`;
  if (ms >= 60000 && ms % 60000 === 0) return `${ms / 60000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

const dirty = new Set();
let renderQueued = false;

function markDirty(id) {
  dirty.add(id);
  if (!renderQueued) {
    renderQueued = true;
    setTimeout(renderDirty, 0);
  }
}

function renderDirty() {
  renderQueued = false;
  const container = document.getElementById("boards");
  for (const id of dirty) {
    const g = games.get(id);
    if (g) renderGame(g);
  }
  dirty.clear();
  const ordered = [...games.values()].sort(
    (a, b) => a.round.localeCompare(b.round, undefined, { numeric: true }) || a.board - b.board || a.id.localeCompare(b.id),
  );
  const want = ordered.map((g) => cards.get(g.id)).filter(Boolean);
  if (want.length !== container.children.length || want.some((c, i) => container.children[i] !== c)) {
    container.replaceChildren(...want);
  }
  document.getElementById("empty").hidden = games.size > 0;
}

function clearAll() {
  games.clear();
  cards.clear();
  dirty.clear();
  document.getElementById("boards").replaceChildren();
  document.getElementById("empty").hidden = false;
}

setInterval(() => {
  for (const [id, card] of cards) {
    const g = games.get(id);
    if (g) updateClocks(card, g);
  }
}, 100);

// ---------------------------------------------------------------------------
// The stream
// ---------------------------------------------------------------------------

function setStatus(state, text) {
  const badge = document.getElementById("status");
  badge.dataset.state = state;
  badge.textContent = text;
  document.body.dataset.connection = state;
}

function fail(text) {
  setStatus("error", text);
  document.getElementById("empty").textContent = text;
}

// "/live/<event>" or "/live/<event>/<round>", each segment percent-encoded.
function target() {
  const parts = location.pathname.split("/").filter((p) => p !== "");
  if (parts[0] !== "live" || parts.length < 2 || parts.length > 3) return null;
  try {
    return { event: decodeURIComponent(parts[1]), round: parts[2] ? decodeURIComponent(parts[2]) : "" };
  } catch {
    return null;
  }
}

const where = target();
const round = where ? where.round : "";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function follow(client, headers) {
  let cursor = "";
  let backoff = 500;
  let resumes = 0;
  for (;;) {
    const request = cursor
      ? { event: where.event, round: where.round, fromCursor: cursor }
      : { event: where.event, round: where.round, fromSeq: 0n };
    document.body.dataset.lastStart = cursor ? "cursor" : "scratch";
    if (cursor) {
      resumes += 1;
      document.body.dataset.resumes = String(resumes);
    } else {
      clearAll();
    }
    try {
      for await (const ev of client.watchEvent(request, { headers })) {
        if (document.body.dataset.connection !== "live") setStatus("live", "live");
        backoff = 500;
        applyEvent(ev);
        if (ev.cursor) cursor = ev.cursor;
        markDirty(ev.gameId);
      }
      // Ended with status OK: every game of the stream has finished.
      if (games.size === 0) {
        setStatus("waiting", "waiting for games");
        cursor = "";
        await sleep(5000);
        continue;
      }
      setStatus("finished", "round finished");
      return;
    } catch (e) {
      const err = ConnectError.from(e);
      if (err.code === Code.InvalidArgument && cursor) {
        // The server cannot resume from this cursor (e.g. another server version).
        cursor = "";
        continue;
      }
      if (err.code === Code.Unauthenticated || err.code === Code.PermissionDenied || err.code === Code.InvalidArgument) {
        fail(`${err.rawMessage || err.message}`);
        return;
      }
      setStatus("reconnecting", "reconnecting…");
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 5000);
    }
  }
}

async function main() {
  if (!where) {
    fail("Open /live/<event> or /live/<event>/<round>.");
    return;
  }
  document.getElementById("event").textContent = where.event;
  document.getElementById("round").textContent = where.round ? `Round ${where.round}` : "All rounds";
  document.title = `${where.event}${where.round ? ` · Round ${where.round}` : ""} — live boards`;
  const token = new URLSearchParams(location.search).get("token");
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  let registry;
  for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
    try {
      const response = await fetch("/assets/live/arbiter.binpb");
      if (!response.ok) throw new Error(`descriptor set: HTTP ${response.status}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
      break;
    } catch {
      setStatus("reconnecting", "reconnecting…");
      await sleep(wait);
    }
  }
  const service = registry.getService("draughts.arbiter.v1.BroadcastService");
  const transport = createGrpcWebTransport({ baseUrl: location.origin, useBinaryFormat: true });
  await follow(createClient(service, transport), headers);
}

main();
