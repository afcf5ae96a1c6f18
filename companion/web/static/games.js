// The games kept on the device (History view): look at an earlier one, read-only, or resume it
// at the table (after asking: every phone follows). "#history/3" keeps game 3 open on reload.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const { el, t } = CT;
  const $ = (id) => document.getElementById(id);
  const STAGE = {
    seating: t("seating"), setup: t("set-up"), tray: t("playing"), actions: t("playing"), round_end: t("playing"),
    pirate: t("playing"), final: t("final scoring"), over: t("over"),
  };
  let tableId = null; // the game at the table, as this phone last saw it

  function when(unixSeconds) {
    return unixSeconds ? new Date(unixSeconds * 1000).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "";
  }

  function describe(g) {
    const bits = [g.title || t("Game {n}", { n: g.id })];
    if (g.players) bits.push(g.players.join(", "));
    if (g.problem) bits.push(t("cannot be read: {problem}", { problem: g.problem }));
    else if (g.stage === "over") bits.push(g.winner ? t("over, {player} won", { player: g.winner }) : t("over"));
    else if (g.stage) bits.push(g.round ? t("round {n}, {stage}", { n: g.round, stage: STAGE[g.stage] || g.stage }) : STAGE[g.stage] || g.stage);
    return bits.join(" · ");
  }

  async function load() {
    try {
      const response = await fetch("/api/games");
      if (!response.ok) return;
      const { games } = await response.json();
      $("games").replaceChildren(...games.map((g) => el("li", { class: g.at_table ? "at-table" : "", dataset: { game: g.id } },
        el("span", { class: "game-line" }, el("b", { text: describe(g) }),
          el("small", { class: "muted", text: ` ${when(g.created_at)}${g.at_table ? ` · ${t("at the table")}` : ""}` })),
        el("span", { class: "button-row" },
          el("button", { type: "button", class: "secondary small look", text: t("Look"), onclick: () => CT.go("history", g.id) }),
          g.at_table || g.problem ? null : el("button", {
            type: "button", class: "secondary small resume", text: t("Resume"), onclick: (e) => resume(g, e.currentTarget),
          })))));
    } catch (err) { /* offline: the list stays as it was */ }
  }

  async function resume(g, near) {
    const now = CT.game();
    const named = (title, id) => (title ? `"${title}"` : t("Game {n}", { n: id }));
    const current = now && now.id !== null ? ` ${t("{game} stays on the device.", { game: named(now.state.name, now.id) })}` : "";
    if (!await CT.ask(t("Resume {game} at the table? Every phone switches to it.", { game: named(g.title, g.id) }) + current,
      t("Resume it"), t("Cancel"))) return;
    // the game this phone shows at the table (null: none), the one the question named: when
    // another phone started or resumed one meanwhile, the device answers 409 with it instead of
    // taking the table from a game nobody here saw (taken before the question, as for a new game)
    const shownId = now ? now.id : null;
    const game = await CT.post(`/api/game/${g.id}/resume`, { replaces: shownId }, near);
    if (game) {
      CT.render(game, true);
      CT.go("table");
      return;
    }
    // Refused because the table changed first (the 409 redrew the page with that game): its
    // notice is on the table view, so say it here, by the button (or above the list, which is
    // redrawn now), unless the page already put a refusal there.
    const after = CT.game();
    if (!after || after.id === null || after.id === shownId || document.querySelector(".refusal")) return;
    const note = el("p", {
      class: "refusal", role: "alert",
      text: t("Another phone changed the game at the table first (now: {game}), so {resumed} was not resumed. Resume it again only if that is still what you meant.",
        { game: named(after.state.name, after.id), resumed: named(g.title, g.id) }),
    });
    const row = near && !near.closest("#games") && near.closest(".button-row");
    if (row && row.isConnected) row.after(note); else $("games").before(note);
    note.scrollIntoView({ block: "nearest" });
  }

  // One earlier game, read-only: who played, the ranking and what happened.
  async function look(id) {
    const viewer = $("game-viewer");
    if (!/^\d+$/.test(id)) { viewer.hidden = true; viewer.replaceChildren(); return; }
    viewer.hidden = false;
    viewer.replaceChildren(el("p", { class: "muted", text: t("Loading…") }));
    let game;
    try {
      const response = await fetch(`/api/game/${encodeURIComponent(id)}`);
      game = await response.json();
      if (!response.ok) { viewer.replaceChildren(el("p", { class: "refusal", text: game.error || t("no such game") })); return; }
    } catch (err) {
      viewer.replaceChildren(el("p", { class: "refusal", text: t("Could not reach the device: {error}", { error: err.message }) }));
      return;
    }
    const sheet = game.score_sheet;
    const state = game.state;
    const lines = [...game.history].reverse().map((h) => el("li", { value: h.n, class: h.in_force ? "" : "undone" },
      el(h.in_force ? "span" : "s", { text: h.text }), h.outcome ? el("small", { class: "outcome", text: ` → ${h.outcome}` }) : null));
    viewer.replaceChildren(...[
      el("h3", { text: `${state.name || t("Game {n}", { n: game.id })} ${game.at_table ? t("(at the table)") : t("(read-only)")}` }),
      el("p", { class: "muted", text: `${state.players.map((p) => p.name).join(", ")} · ${state.round ? t("round {n}", { n: state.round }) : t("set-up")} · ${sheet.final ? t("final score") : t("score if it ended now")}` }),
      el("ol", { class: "ranking" }, CT.rankingItems(sheet)), CT.tieNote(sheet),
      el("details", { class: "viewer-log" }, el("summary", { text: t("What happened ({n} events)", { n: game.history.length }) }),
        el("ol", { class: "log", reversed: true }, lines)),
      el("div", { class: "button-row" },
        game.at_table ? null : el("button", {
          type: "button", class: "primary resume", text: t("Resume this game"),
          onclick: (e) => resume({ id: game.id, title: state.name }, e.currentTarget),
        }),
        el("a", { href: `/api/game/${game.id}/events.jsonl`, download: "", class: "export", text: t("Download its log") }),
        el("button", { type: "button", class: "secondary close-viewer", text: t("Close"), onclick: () => CT.go("history") })),
    ].filter(Boolean));
    viewer.scrollIntoView({ block: "nearest" });
  }

  CT.onView((view, arg) => {
    if (view !== "history") return;
    load();
    look(arg);
  });

  // A new game or a resumed one: the list (and "at the table") changes.
  CT.onGameShown = (game) => {
    if (game.id === tableId) return;
    tableId = game.id;
    if (CT.view().view === "history") load();
  };
})(window.CT);
