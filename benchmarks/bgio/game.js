// A Hang Ten-like game for boardgame.io 0.50.2: the same work per move as Fairway's Hang Ten
// (domain/grid), written for the side-by-side benchmark (benchmarks/side_by_side.py).
//
// Each player has a 2x5 layout dealt face down; the stock is four 52-card decks; a centre
// card is turned up after the deal. Setup: every player turns up two cards, in different
// rows and columns, all players at once. Play: the player to act draws (from the stock, the
// centre or another player's discard pile), then replaces any layout card with it (the old
// card goes face up onto their own pile) or, with a stock card, discards it. A player with
// every card face up has gone out: each other player gets one more turn, the hand is scored
// (column pairs cancel; sevens are worth 0) and the next is dealt; a game is ten hands.
//
// Secret state: `playerView` hides every face-down card and the stock (only its size is
// shown), and a card drawn from the stock from everyone but the player who drew it.
// Actions use Fairway's JSON names (`setup-flip`, `draw`, `replace`, `discard`) so that the
// same bots drive both servers; `legalActions` lists them as Fairway's `legal_actions` does.

const { INVALID_MOVE, ActivePlayers } = require("boardgame.io/core");

const COLUMNS = 5;
const CELLS = 2 * COLUMNS;
const HANDS = 10;
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const SUITS = ["C", "D", "H", "S"];
const VALUES = { A: 1, 7: 0, T: 10, J: 10, Q: 10, K: 10 };

function value(card) {
  const rank = card.slice(0, -1);
  return rank in VALUES ? VALUES[rank] : Number(rank);
}

function deal(G, ctx, random) {
  const deck = [];
  for (let d = 0; d < 4; d++) {
    for (const rank of RANKS) for (const suit of SUITS) deck.push(rank + suit);
  }
  const stock = random.Shuffle(deck);
  G.layouts = [];
  G.faceUp = [];
  G.piles = [];
  for (let seat = 0; seat < ctx.numPlayers; seat++) {
    G.layouts.push(stock.splice(0, CELLS));
    G.faceUp.push(new Array(CELLS).fill(false));
    G.piles.push([]);
  }
  G.centre = stock.shift();
  G.stock = stock;
  G.drawn = null;
  G.drawnFrom = null;
  G.setupLeft = new Array(ctx.numPlayers).fill(2);
  G.wentOut = null;
  G.finalTurns = 0;
}

function score(G) {
  return G.layouts.map((layout) => {
    let total = 0;
    for (let col = 0; col < COLUMNS; col++) {
      const top = layout[col];
      const bottom = layout[col + COLUMNS];
      if (top.slice(0, -1) !== bottom.slice(0, -1)) total += value(top) + value(bottom);
    }
    return total;
  });
}

function setupAllowed(G, seat, at) {
  const row = Math.floor(at / COLUMNS);
  const col = at % COLUMNS;
  for (let other = 0; other < CELLS; other++) {
    if (!G.faceUp[seat][other]) continue;
    if (other === at || Math.floor(other / COLUMNS) === row || other % COLUMNS === col) {
      return false;
    }
  }
  return true;
}

function refill(G, random) {
  // The stock ran out: every pile but its top card is shuffled into a new stock.
  const cards = [];
  for (const pile of G.piles) cards.push(...pile.splice(0, Math.max(0, pile.length - 1)));
  G.stock = random.Shuffle(cards);
}

function setupFlip({ G, playerID }, row, col) {
  const seat = Number(playerID);
  const at = row * COLUMNS + col;
  if (!(G.setupLeft[seat] > 0) || !(at >= 0 && at < CELLS) || !setupAllowed(G, seat, at)) {
    return INVALID_MOVE;
  }
  G.faceUp[seat][at] = true;
  G.setupLeft[seat] -= 1;
}

function draw({ G, playerID, random }, source, from) {
  const seat = Number(playerID);
  if (G.drawn !== null) return INVALID_MOVE;
  if (source === "stock") {
    if (G.stock.length === 0) refill(G, random);
    if (G.stock.length === 0) return INVALID_MOVE;
    G.drawn = G.stock.shift();
  } else if (source === "centre" && G.centre !== null) {
    G.drawn = G.centre;
    G.centre = null;
  } else if (source === "pile" && from !== seat && G.piles[from] && G.piles[from].length) {
    G.drawn = G.piles[from].pop();
  } else {
    return INVALID_MOVE;
  }
  G.drawnFrom = source;
}

function endOfTurn(G, ctx, seat, events) {
  G.drawn = null;
  G.drawnFrom = null;
  if (G.wentOut === null && G.faceUp[seat].every(Boolean)) {
    G.wentOut = seat;
    G.finalTurns = ctx.numPlayers - 1;
  } else if (G.wentOut !== null) {
    G.finalTurns -= 1;
  }
  if (G.wentOut === null || G.finalTurns > 0) {
    events.endTurn();
    return;
  }
  const points = score(G);
  G.totals = G.totals.map((total, i) => total + points[i]);
  G.lastHand = { hand: G.hand, points, layouts: G.layouts };
  if (G.hand >= HANDS) {
    const best = Math.min(...G.totals);
    G.winners = G.totals.flatMap((total, i) => (total === best ? [i] : []));
    return;
  }
  G.hand += 1;
  G.dealer = (G.dealer + 1) % ctx.numPlayers;
  G.setupLeft = null;
  events.setPhase("setup");
}

function replace({ G, ctx, playerID, events }, row, col) {
  const seat = Number(playerID);
  const at = row * COLUMNS + col;
  if (G.drawn === null || !(at >= 0 && at < CELLS)) return INVALID_MOVE;
  G.piles[seat].push(G.layouts[seat][at]);
  G.layouts[seat][at] = G.drawn;
  G.faceUp[seat][at] = true;
  endOfTurn(G, ctx, seat, events);
}

function discard({ G, ctx, playerID, events }) {
  const seat = Number(playerID);
  if (G.drawn === null || G.drawnFrom !== "stock") return INVALID_MOVE;
  G.piles[seat].push(G.drawn);
  endOfTurn(G, ctx, seat, events);
}

// Fairway's actions answer without If-Match acts on the game's current state; so do these
// (boardgame.io otherwise refuses an action whose client sent an older state id).
const move = (fn) => ({ move: fn, ignoreStaleStateID: true });

function legalActions(G, ctx, playerID) {
  const seat = Number(playerID);
  const actions = [];
  if (ctx.gameover !== undefined) return actions;
  if (ctx.phase === "setup") {
    if (G.setupLeft[seat] > 0) {
      for (let at = 0; at < CELLS; at++) {
        if (setupAllowed(G, seat, at)) {
          actions.push({ type: "setup-flip", row: Math.floor(at / COLUMNS), col: at % COLUMNS });
        }
      }
    }
    return actions;
  }
  if (ctx.currentPlayer !== String(seat)) return actions;
  if (G.drawn === null) {
    actions.push({ type: "draw", source: "stock" });
    if (G.centre !== null) actions.push({ type: "draw", source: "centre" });
    G.piles.forEach((pile, other) => {
      if (other !== seat && pile.length) actions.push({ type: "draw", source: "pile", seat: other });
    });
    return actions;
  }
  for (let at = 0; at < CELLS; at++) {
    actions.push({ type: "replace", row: Math.floor(at / COLUMNS), col: at % COLUMNS });
  }
  if (G.drawnFrom === "stock") actions.push({ type: "discard" });
  return actions;
}

function status(G, ctx) {
  if (ctx.gameover !== undefined) return { phase: "game_over", hand: G.hand, to_act: [] };
  if (ctx.phase === "setup") {
    const toAct = G.setupLeft.flatMap((left, seat) => (left > 0 ? [seat] : []));
    return { phase: "setup", hand: G.hand, to_act: toAct };
  }
  return { phase: "playing", hand: G.hand, to_act: [Number(ctx.currentPlayer)] };
}

function playerView({ G, ctx, playerID }) {
  const viewer = playerID === null || playerID === undefined ? null : Number(playerID);
  const current = Number(ctx.currentPlayer);
  const { stock, layouts, faceUp, ...rest } = G;
  return {
    ...rest,
    layouts: layouts.map((layout, seat) => layout.map((card, at) => (faceUp[seat][at] ? card : null))),
    faceUp,
    stockSize: stock.length,
    drawn: G.drawnFrom === "stock" && viewer !== current ? null : G.drawn,
  };
}

const HangTen = {
  name: "hang-ten",
  minPlayers: 4,
  maxPlayers: 6,
  setup: () => ({ hand: 1, dealer: 0, totals: [], setupLeft: null, lastHand: null, winners: [] }),
  playerView,
  endIf: ({ G }) => (G.winners.length ? { winners: G.winners } : undefined),
  phases: {
    setup: {
      start: true,
      onBegin: ({ G, ctx, random }) => {
        if (!G.totals.length) G.totals = new Array(ctx.numPlayers).fill(0);
        deal(G, ctx, random);
      },
      turn: { activePlayers: ActivePlayers.ALL },
      moves: { "setup-flip": move(setupFlip) },
      // checked before onBegin deals: no hand dealt yet (null) is not a finished setup
      endIf: ({ G }) => G.setupLeft !== null && G.setupLeft.every((left) => left === 0),
      next: "play",
    },
    play: {
      turn: {
        order: {
          first: ({ G, ctx }) => (G.dealer + 1) % ctx.numPlayers,
          next: ({ ctx }) => (ctx.playOrderPos + 1) % ctx.numPlayers,
        },
      },
      moves: { draw: move(draw), replace: move(replace), discard: move(discard) },
    },
  },
};

module.exports = { HangTen, legalActions, status };
