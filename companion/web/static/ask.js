// Asking the players before something that is hard to take back (a new game, resuming another,
// a drop the device finds unusual): one <dialog>, answered with Yes or No; CT.ask resolves true
// for Yes. The server asks too (409 with "confirm"); the page puts its question the same way.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const dialog = document.getElementById("ask");
  let pending = null; // resolves the open question

  dialog.addEventListener("close", () => {
    const answer = dialog.returnValue === "yes";
    dialog.returnValue = "";
    if (pending) { const done = pending; pending = null; done(answer); }
  });

  // ask("Start a new game?", "Start it") -> Promise<boolean>
  CT.ask = function ask(question, yesText, noText) {
    if (pending) { const done = pending; pending = null; done(false); } // a newer question wins
    document.getElementById("ask-text").textContent = question;
    document.getElementById("ask-yes").textContent = yesText || CT.t("Yes");
    document.getElementById("ask-no").textContent = noText || CT.t("No");
    return new Promise((resolve) => {
      pending = resolve; // an open dialog just gets the newer question
      if (!dialog.open) { dialog.returnValue = ""; dialog.showModal(); }
    });
  };
})(window.CT);
