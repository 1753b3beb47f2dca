// Chainlit 2.12's page says <html lang="en"> whatever the browser's language, while glm1m's
// sentences and Chainlit's own labels follow the browser's first language (chainlit_app/i18n.py:
// any "zh" tag reads Chinese). Say the page's real language, for screen readers, fonts and the
// browser's offer to translate. Loaded through .chainlit/config.toml's custom_js.
(function () {
  var first = ((navigator.languages && navigator.languages[0]) || navigator.language || "en").toLowerCase();
  document.documentElement.lang = first.indexOf("zh") === 0 ? "zh-CN" : "en";
})();
