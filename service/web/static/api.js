// The public REST API and the game's stream, as any client uses them. Tokens live in this
// browser's localStorage and travel only in the Authorization header, never in a URL.

const SEATS = "fairway.seats";
const CREATORS = "fairway.creators";
const NAME = "fairway.name";

function readStore(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "{}") || {};
  } catch {
    return {};
  }
}

export const tokens = {
  seats: () => readStore(SEATS),
  seat: (gameId) => readStore(SEATS)[gameId] || null,
  keepSeat(gameId, held) {
    const all = readStore(SEATS);
    all[gameId] = held;
    localStorage.setItem(SEATS, JSON.stringify(all));
  },
  creator: (gameId) => readStore(CREATORS)[gameId] || null,
  keepCreator(gameId, token) {
    const all = readStore(CREATORS);
    all[gameId] = token;
    localStorage.setItem(CREATORS, JSON.stringify(all));
  },
  name: () => localStorage.getItem(NAME) || "",
  keepName: (name) => localStorage.setItem(NAME, name),
};

export class ApiProblem extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || "unknown";
  }
}

export async function api(method, path, { token, body, headers = {} } = {}) {
  const sent = { ...headers };
  if (token) sent.Authorization = `Bearer ${token}`;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  if (method === "POST") sent["Idempotency-Key"] ??= crypto.randomUUID();
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  if (response.status === 204 || response.status === 304) return null;
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiProblem(response.status, answer);
  return answer;
}

// Server-Sent Events over fetch (EventSource cannot send a token): calls onMessage with each
// event's parsed data, reconnects after a dropped connection with Last-Event-ID, and stops
// for good when the server answers 204 (nothing more will come) or `stop()` is called.
export function follow(path, token, onMessage, onState = () => {}) {
  let lastId = null;
  let stopped = false;
  let controller = null;
  let retry = 2000;

  async function connect() {
    controller = new AbortController();
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (lastId !== null) headers["Last-Event-ID"] = lastId;
    const response = await fetch(path, { headers, signal: controller.signal, cache: "no-store" });
    if (response.status === 204) return false;
    if (!response.ok) throw new Error(`stream answered ${response.status}`);
    onState("live");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return true;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        dispatch(block);
      }
    }
  }

  function dispatch(block) {
    let data = "";
    let id = null;
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") data += (data ? "\n" : "") + value;
      else if (field === "id") id = value;
      else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
    }
    if (id !== null) lastId = id;
    if (data) onMessage(JSON.parse(data));
  }

  (async () => {
    while (!stopped) {
      try {
        const more = await connect();
        if (!more) break;
      } catch (error) {
        if (stopped) break;
        onState("reconnecting");
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, retry));
    }
    onState("ended");
  })();

  return {
    stop() {
      stopped = true;
      controller?.abort();
    },
    drop() {
      controller?.abort(); // as a network fault would: the loop reconnects where it was
    },
  };
}

// A tiny DOM builder: every string becomes a text node, so a name can never be markup.
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function seatName(seat) {
  if (seat.name) return seat.name;
  if (seat.bot) return `${seat.bot} bot`;
  return `seat ${seat.seat + 1} (free)`;
}
