// The fairness panel's checks of one finished hand, from what any client may read: the
// game's events (the seed chain's anchor, each hand's commitment, seat seeds and revealed
// seeds) and the hand's replay (every card at each step). Each check says where it looked.

import { sheddingPlays } from "./sheddingcheck.js";
import { WordStream, hashedTimes, handSeed, hex, sha256, unhex, unshuffled } from "./shuffle.js";

const CARDS_EACH = 19; // Tens-shedding: 4 face-down stack cards and 15 to choose from

function check(name, ok, detail) {
  return { name, ok: Boolean(ok), detail };
}

function sameList(a, b) {
  return a.length === b.length && a.every((card, i) => card === b[i]);
}

function sameCards(a, b) {
  return sameList([...a].sort(), [...b].sort());
}

function deckFor(rules, players) {
  const size = rules.decks.find((d) => players <= d.players);
  if (!size) throw new Error(`no deck for ${players} players`);
  return size;
}

// What the seed deals, as docs/SHUFFLE.md sections 5 and 6 say.
export async function derive(seed, hand, dealer, players, variant, rules) {
  const stream = new WordStream(seed);
  const drawnDealer = hand === 1 ? await stream.below(players) : dealer;
  if (variant === "tens-shedding") {
    const decks = Math.ceil((CARDS_EACH * players) / 52);
    const deck = await stream.shuffled(unshuffled(decks));
    const grabs = [];
    for (let seat = 0; seat < players; seat += 1) {
      grabs.push(rules.grab_min + (await stream.below(rules.grab_max - rules.grab_min + 1)));
    }
    const seats = [];
    for (let k = 0; k < players; k += 1) {
      const cards = deck.slice(k * CARDS_EACH, (k + 1) * CARDS_EACH);
      seats[(drawnDealer + 1 + k) % players] = { faceDown: cards.slice(0, 4), hand: cards.slice(4) };
    }
    return { dealer: drawnDealer, seats, grabs, stream };
  }
  const size = deckFor(rules, players);
  const deck = await stream.shuffled(unshuffled(size.decks, size.jokers));
  const per = 2 * rules.columns;
  const layouts = [];
  for (let k = 0; k < players; k += 1) layouts[(drawnDealer + 1 + k) % players] = deck.slice(k * per, (k + 1) * per);
  let top = players * per;
  let turnedUp = null;
  if (rules.turn_up !== "none") turnedUp = deck[top++];
  return { dealer: drawnDealer, layouts, turnedUp, stock: deck.slice(top), stream };
}

// Every card drawn from the stock, against the derived stock; a rebuilt stock (section 7)
// is gathered from the piles as the replay shows them just before, and shuffled on.
async function drawsChecked(steps, derived) {
  let stock = derived.stock;
  let next = 0;
  let draws = 0;
  for (let i = 0; i < steps.length; i += 1) {
    const event = steps[i].event;
    if (event.type === "stock.reshuffled") {
      const piles = steps[i - 1].table.discard_piles;
      const gathered = piles.flatMap((pile) => pile.slice(0, -1));
      stock = await derived.stream.shuffled(gathered);
      next = 0;
      if (gathered.length !== event.cards) {
        return check("every card drawn from the stock", false, `step ${i}: ${event.cards} cards rebuilt, ${gathered.length} gathered`);
      }
    } else if (event.type === "card.drawn" && event.source === "stock") {
      draws += 1;
      if (event.card !== stock[next]) {
        return check("every card drawn from the stock", false, `step ${i} (version ${steps[i].version}): drew ${event.card}, the deck says ${stock[next]}`);
      }
      next += 1;
    }
  }
  return check("every card drawn from the stock", true, `${draws} draws, each the next card of the derived stock`);
}

function dealtChecked(table, derived, variant) {
  const name = "every card dealt";
  if (variant === "tens-shedding") {
    for (const player of table.players) {
      const mine = derived.seats[player.seat];
      const down = player.face_down.filter(Boolean);
      const all = [...down, ...player.face_up.filter(Boolean), ...player.hand];
      if (!sameCards(all, [...mine.faceDown, ...mine.hand]) || !sameList(down, mine.faceDown)) {
        return check(name, false, `seat ${player.seat + 1}'s 19 cards differ from the derived deal`);
      }
      if (player.grab !== derived.grabs[player.seat]) {
        return check(name, false, `seat ${player.seat + 1}'s grab: ${player.grab}, the stream says ${derived.grabs[player.seat]}`);
      }
    }
    return check(name, true, `${table.players.length} x 19 cards and the grabs`);
  }
  for (let seat = 0; seat < derived.layouts.length; seat += 1) {
    if (!sameList(table.layouts[seat].flat(), derived.layouts[seat])) {
      return check(name, false, `seat ${seat + 1}'s layout differs from the derived deal`);
    }
  }
  const shown = table.centre ?? table.discard_piles.flat()[0] ?? null;
  if (derived.turnedUp !== shown) return check(name, false, `the turned-up card: ${shown}, the deck says ${derived.turnedUp}`);
  const stock = table.stock || [];
  if (!sameList(stock, derived.stock)) return check(name, false, "the stock differs from the derived deck");
  return check(name, true, `${derived.layouts.length} layouts, the turned-up card and a stock of ${stock.length}`);
}

// Tens-shedding: every card the round's events show, where the deal put it.
function playsChecked(hand, steps, at, derived) {
  const events = steps.slice(at + 1).map(({ event, version }, i) => {
    const { type, ...data } = event;
    return { where: `step ${at + 2 + i} (version ${version})`, type, data }; // as the page counts steps, from 1
  });
  const { failures, shown } = sheddingPlays(hand, derived, events);
  return check("every card laid, played, turned and picked up", failures.length === 0,
    failures.length ? failures.slice(0, 3).join("; ") : `${shown} cards, each where the deal put it`);
}

// docs/SHUFFLE.md section 10: each seat's seed for a hand is the last its holder set after
// the chain covering the hand was committed and before the deal, else its name as claimed.
function seatSeedsBefore(events, dealtVersion, seats) {
  const names = [];
  const seeds = [];
  for (const { version, event } of events) {
    if (version >= dealtVersion) break;
    if (event.type === "seat.claimed") {
      names[event.seat] = event.name;
      seeds[event.seat] = null;
    } else if (event.type === "seat.released") {
      seeds[event.seat] = null;
    } else if (event.type === "seat.seed_set") {
      seeds[event.seat] = event.seed;
    } else if (event.type === "seed_chain.extended") {
      seeds.fill(null);
    }
  }
  return Array.from({ length: seats }, (_, seat) => seeds[seat] ?? names[seat]);
}

// The checks of hand `hand`: `events` the game's feed entries, `replay` the hand's replay,
// `rules` the variant's rules record (grid: decks, columns, turn_up; shedding: grabs).
export async function checkHand(events, replay, rules) {
  const checks = [];
  const of = (type, where = () => true) => events.filter((e) => e.event.type === type && where(e.event));
  const hand = replay.hand;
  const dealt = of("hand.dealt", (e) => e.hand === hand)[0]?.event;
  const created = of("game.created")[0]?.event;
  if (!dealt || !dealt.seed) return [check("the hand's seeds are revealed", false, "no revealed hand.dealt")];
  const players = replay.seats.length;
  if (dealt.shuffle === "hmac-seat-seeds-v2") {
    const extension = of("seed_chain.extended", (e) => e.first_hand === hand)[0]?.event;
    const previous = of("hand.dealt", (e) => e.hand === hand - 1)[0]?.event;
    const link = extension ? extension.anchor : hand === 1 ? created?.seed_anchor : previous?.server_seed;
    checks.push(check("the commitment is the chain's link", dealt.commitment === link,
      hand === 1 ? "the anchor committed when the game was created" : `hand ${hand - 1}'s revealed server seed`));
    const server = unhex(dealt.server_seed);
    checks.push(check("SHA-256(server seed) is the commitment", hex(await sha256(server)) === dealt.commitment, dealt.commitment));
    const seed = await handSeed(server, dealt.nonce || hand, dealt.seat_seeds);
    const dealtAt = of("hand.dealt", (e) => e.hand === hand)[0].version;
    const expected = seatSeedsBefore(events, dealtAt, players);
    checks.push(check("the seats' seeds are those the seats set (or their names)", sameList(expected, dealt.seat_seeds),
      `expected ${expected.map((s) => JSON.stringify(s)).join(", ")}`));
    checks.push(check("the seed is the HMAC of the server seed over the seats' seeds", hex(seed) === dealt.seed,
      `seat seeds: ${dealt.seat_seeds.map((s) => JSON.stringify(s)).join(", ")}`));
    if (created?.seed_secret && created.seed_hands) {
      const anchor = hex(await hashedTimes(unhex(created.seed_secret), created.seed_hands));
      checks.push(check("the chain's secret hashes to its anchor", anchor === created.seed_anchor, `${created.seed_hands} hashes`));
    }
  } else {
    checks.push(check("SHA-256(seed) is the commitment", hex(await sha256(unhex(dealt.seed))) === dealt.commitment, dealt.commitment));
  }
  const derived = await derive(unhex(dealt.seed), hand, dealt.dealer, players, replay.variant, rules);
  checks.push(check("the dealer", derived.dealer === dealt.dealer, `seat ${dealt.dealer + 1}`));
  const at = replay.steps.findIndex((s) => s.event.type === "hand.dealt");
  checks.push(dealtChecked(replay.steps[at].table, derived, replay.variant));
  if (replay.variant !== "tens-shedding") checks.push(await drawsChecked(replay.steps.slice(at), derived));
  else checks.push(playsChecked(hand, replay.steps, at, derived));
  return checks;
}
