// The page's own words in the phone's language: t("Take {n} gold", { n: 3 }) looks the English
// text up in the catalogue the server sent (/i18n/<lang>.js, loaded just before this file) and
// fills in the values; a text without a translation stays English. The switch in the header
// remembers the choice in the "lang" cookie for a year and reloads the page in that language.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const catalogue = window.CT_I18N || { lang: "en", messages: {} };
  CT.lang = catalogue.lang;

  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, (whole, key) =>
      values && Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : whole);
  }

  function t(text, values) {
    const found = catalogue.messages[text];
    return fill(typeof found === "string" && found ? found : text, values);
  }
  CT.t = t;

  // English and German both use the first form for exactly one, the second otherwise.
  CT.tn = function tn(one, many, n, values) {
    const found = catalogue.messages[one];
    const forms = Array.isArray(found) && found.every(Boolean) ? found : [one, many];
    return fill(n === 1 ? forms[0] : forms[1], { n, ...values });
  };

  const COLOUR_WORDS = {
    blue: t("blue"), black: t("black"), red: t("red"), brown: t("brown"), green: t("green"),
    yellow: t("yellow"), white: t("white"),
  };
  CT.colourName = (colour) => COLOUR_WORDS[colour] || colour;

  // The default goods (companion.amerigo.words.GOOD); a good a table named itself stays as typed.
  const GOOD_WORDS = {
    cotton: t("cotton"), tobacco: t("tobacco"), sugar: t("sugar"), coconut: t("coconut"), coffee: t("coffee"),
  };
  CT.goodName = (good) => (Object.prototype.hasOwnProperty.call(GOOD_WORDS, good) ? GOOD_WORDS[good] : good);

  for (const button of document.querySelectorAll(".lang-switch")) {
    button.addEventListener("click", () => {
      document.cookie = `lang=${button.dataset.lang}; max-age=31536000; path=/; samesite=lax`;
      window.location.reload();
    });
  }
})(window.CT);
