// boardgame.io 0.50.2's own Server for the side-by-side benchmark (benchmarks/side_by_side.py):
// in memory, or on PostgreSQL through bgio-postgres when DATABASE_URL is set.
//
//     PORT=8000 [DATABASE_URL=postgresql://... [POOL_SIZE=10]] NODE_ENV=production node server.js
//
// Games are made with boardgame.io's lobby routes (POST /games/hang-ten/create, then
// /games/hang-ten/<matchID>/join per seat). A move reaches boardgame.io's own Master, as a
// socket.io client's 'update' does (a Master per move, one move at a time per match, the
// match's state fetched from and written to the storage, the answer after the write),
// over plain HTTP so that the load client that drives Fairway drives this server too:
//
//     POST /games/<matchID>/actions   Authorization: Bearer <playerID>:<credentials>
//         body: a Fairway action ({"type": "draw", "source": "stock"}, ...)
//     GET  /games/<matchID>/me        the same header
//
// Both answer what Fairway's `POST /games/{id}/actions` answers the acting seat: the seat's
// view (boardgame.io's playerView and log redaction, exactly what it sends a socket client)
// with the game's status and the seat's legal actions. A refused move answers 409, bad
// credentials 403. GET /health answers "ok" once the server (and its pool) is up.
// (GET /games/<matchID>/me is registered before the lobby's GET /games/:name/:id, which it
// shadows only for an id of "me".)
//
// boardgame.io refuses a move by leaving the state as it was (its Master still writes it)
// and logs the refusal on stderr; the bots here rarely make one.

const { Server } = require("boardgame.io/server");
const { Master } = require("boardgame.io/master");
const { ProcessGameConfig, getFilterPlayerView } = require("boardgame.io/internal");
const PQueue = require("p-queue").default;
const { HangTen, legalActions, status } = require("./game");

const game = ProcessGameConfig(HangTen);
const filterPlayerView = getFilterPlayerView(game);

// Sequelize's pool (bgio-postgres passes these options through): POOL_SIZE connections,
// opened once and kept, as Fairway's pool keeps its own (Sequelize's default is at most 5,
// closed after 10 s idle: between rounds, when a shared PostgreSQL may have no slot left).
let db;
if (process.env.DATABASE_URL) {
  const { PostgresStore } = require("bgio-postgres");
  const size = Number(process.env.POOL_SIZE || 10);
  db = new PostgresStore(process.env.DATABASE_URL, {
    logging: false,
    pool: { max: size, min: size, idle: 3600000 },
  });
}
const server = Server({ games: [game], db, origins: [] });

// One move at a time per match, as boardgame.io's socket.io transport queues them.
const queues = new Map();
function queueFor(matchID) {
  let queue = queues.get(matchID);
  if (queue === undefined) {
    queue = new PQueue({ concurrency: 1 });
    queues.set(matchID, queue);
  }
  return queue;
}

const MOVES = {
  "setup-flip": (a) => [a.row, a.col],
  draw: (a) => [a.source, a.seat],
  replace: (a) => [a.row, a.col],
  discard: () => [],
};

async function readJson(req) {
  let text = "";
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

function bearer(ctx) {
  const header = ctx.get("authorization");
  const at = header.indexOf(":");
  if (!header.startsWith("Bearer ") || at < 0) ctx.throw(401, "Bearer <playerID>:<credentials>");
  return { playerID: header.slice(7, at), credentials: header.slice(at + 1) };
}

function answer(matchID, playerID, state) {
  const [, view, log] = filterPlayerView(playerID, { type: "update", args: [matchID, state] }).args;
  return {
    game_id: matchID,
    seat: Number(playerID),
    version: state._stateID,
    status: status(state.G, state.ctx),
    view,
    log,
    legal_actions: legalActions(state.G, state.ctx, playerID),
  };
}

server.router.post("/games/:id/actions", async (ctx) => {
  const matchID = ctx.params.id;
  const { playerID, credentials } = bearer(ctx);
  let action;
  try {
    action = await readJson(ctx.req);
  } catch {
    ctx.throw(400, "the body is not JSON");
  }
  const args = MOVES[action.type];
  if (args === undefined) ctx.throw(422, `no action ${action.type}`);
  let updated;
  const transport = {
    send: () => {},
    sendAll: (payload) => {
      if (payload.type === "update") updated = payload.args[1];
    },
  };
  const master = new Master(game, server.db, transport, server.auth);
  const credAction = {
    type: "MAKE_MOVE",
    payload: { type: action.type, args: args(action), playerID, credentials },
  };
  const result = await queueFor(matchID).add(() =>
    master.onUpdate(credAction, undefined, matchID, playerID)
  );
  if (result && result.error) ctx.throw(result.error === "game not found" ? 404 : 403, result.error);
  // boardgame.io refuses silently: nothing sent, or the state unchanged with an empty log
  if (updated === undefined || !updated.deltalog || updated.deltalog.length === 0) {
    ctx.throw(409, "move refused");
  }
  if (updated.ctx.gameover !== undefined) queues.delete(matchID);
  ctx.body = answer(matchID, playerID, updated);
});

server.router.get("/games/:id/me", async (ctx) => {
  const matchID = ctx.params.id;
  const { playerID, credentials } = bearer(ctx);
  const { state, metadata } = await server.db.fetch(matchID, { state: true, metadata: true });
  if (state === undefined) ctx.throw(404, "game not found");
  const ok = await server.auth.authenticateCredentials({ playerID, credentials, metadata });
  if (!ok) ctx.throw(403, "unauthorized");
  ctx.body = answer(matchID, playerID, state);
});

let ready = false;
server.router.get("/health", (ctx) => {
  ctx.status = ready ? 200 : 503;
  ctx.body = ready ? "ok" : "starting";
});

async function main() {
  await server.run({ port: Number(process.env.PORT || 8000) });
  if (db) {
    // open the whole pool now, as Fairway's opens at start
    const size = db.sequelize.connectionManager.pool.maxSize;
    await Promise.all(
      Array.from({ length: size }, () => db.sequelize.query("SELECT pg_sleep(0.05)"))
    );
  }
  ready = true;
  console.log(`boardgame.io ${db ? "on PostgreSQL" : "in memory"} ready`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
