// What the live board page (live.js) and the arbiter's console (console.js) share: the
// API read from the server's FileDescriptorSet, the grpc-web transport to the page's own
// origin, the arbiter's token and its sign-in form, and small drawing helpers.
//
// The token is kept in the tab's sessionStorage and sent only as `authorization: Bearer`
// on the grpc-web calls. It never goes into the URL: a link with `?token=` still works,
// but the token is moved to sessionStorage and removed from the address bar at once
// (`history.replaceState`, so the history entry has no token either); the pages are
// served with `Referrer-Policy: no-referrer`.

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

export { Code, ConnectError, timestampMs };

// Enum values of arbiter.proto.
export const SIDE_WHITE = 1;
export const SIDE_BLACK = 2;
export const CLOCK_RUNNING = 2;
// GameStatus, as the pages name it.
export const STATUS = { 1: "not started", 2: "playing", 3: "paused", 4: "finished" };
// GameResult, as a score.
export const SCORE = { 1: "1–0", 2: "0–1", 3: "½–½", 4: "0–0", 5: "—" };

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function num(v) {
  return v === undefined || v === null ? 0 : Number(v);
}

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function formatClock(ms) {
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

// A `ClockSnapshot` as the pages keep it.
export function clockOf(snapshot) {
  if (!snapshot) return null;
  return {
    state: snapshot.state,
    running: snapshot.runningSide,
    white: num(snapshot.whiteMs),
    black: num(snapshot.blackMs),
    readAt: snapshot.readAt ? timestampMs(snapshot.readAt) : Date.now(),
  };
}

// A refusal as the server wrote it: its code's name and its message (which names the
// rule or the field).
export function refusalText(e) {
  const err = ConnectError.from(e);
  const name = Code[err.code] || String(err.code);
  const words = name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  return `${words}: ${err.rawMessage || err.message}`;
}

// "/<kind>/<event>" or "/<kind>/<event>/<round>", each segment percent-encoded.
export function target(kind) {
  const parts = location.pathname.split("/").filter((p) => p !== "");
  if (parts[0] !== kind || parts.length < 2 || parts.length > 3) return null;
  try {
    return { event: decodeURIComponent(parts[1]), round: parts[2] ? decodeURIComponent(parts[2]) : "" };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// The token
// ---------------------------------------------------------------------------

const KEY = "draughts-arbiter.token";

// A `?token=` link: the token goes to sessionStorage and out of the address bar (and
// out of this history entry) before anything else happens.
function takeTokenFromUrl() {
  const url = new URL(location.href);
  if (!url.searchParams.has("token")) return;
  const token = url.searchParams.get("token").trim();
  url.searchParams.delete("token");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  if (token) sessionStorage.setItem(KEY, token);
}
takeTokenFromUrl();

export function token() {
  return sessionStorage.getItem(KEY) || "";
}

export function authHeaders() {
  const t = token();
  return t ? { authorization: `Bearer ${t}` } : {};
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

// The sign-in form (`#signin`: an input `token`, a submit button, a cancel button) and
// the header's sign-in and sign-out buttons (`#signin-open`, `#signout`). `changed` is
// called after a sign-in or a sign-out.
export function wireSignIn(changed) {
  const form = document.getElementById("signin");
  const open = document.getElementById("signin-open");
  const out = document.getElementById("signout");
  const cancel = document.getElementById("signin-cancel");
  const input = form.elements.token;
  const show = () => {
    const signed = token() !== "";
    document.body.dataset.signedIn = signed ? "yes" : "no";
    if (open) open.hidden = signed;
    if (out) out.hidden = !signed;
  };
  show();
  if (open) {
    open.addEventListener("click", () => {
      form.hidden = false;
      input.focus();
    });
  }
  if (cancel) {
    cancel.addEventListener("click", () => {
      form.hidden = true;
      input.value = "";
    });
  }
  if (out) {
    out.addEventListener("click", () => {
      signOut();
      show();
      changed();
    });
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const t = input.value.trim();
    input.value = "";
    if (!t) return;
    sessionStorage.setItem(KEY, t);
    form.hidden = true;
    show();
    changed();
  });
  return { form, show };
}

// ---------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------

// The API's services, read from the server's descriptor set (retried until it loads).
export async function loadApi(onRetry) {
  let registry;
  for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
    try {
      const response = await fetch("/assets/live/arbiter.binpb");
      if (!response.ok) throw new Error(`descriptor set: HTTP ${response.status}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
      break;
    } catch {
      if (onRetry) onRetry();
      await sleep(wait);
    }
  }
  const transport = createGrpcWebTransport({ baseUrl: location.origin, useBinaryFormat: true });
  const client = (name) => createClient(registry.getService(`draughts.arbiter.v1.${name}`), transport);
  return {
    registry,
    broadcast: client("BroadcastService"),
    games: client("GameService"),
    arbiter: client("ArbiterService"),
    tournaments: client("TournamentService"),
    // An enum value in words: ("IrregularityKind", 2) → "illegal move".
    enumWords(name, value) {
      const e = registry.getEnum(`draughts.arbiter.v1.${name}`);
      const v = e && e.values.find((x) => x.number === value);
      if (!v) return String(value);
      const prefix = `${name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}_`;
      const bare = v.name.startsWith(prefix) ? v.name.slice(prefix.length) : v.name;
      return bare.replace(/_/g, " ").toLowerCase();
    },
  };
}
