// Chainlit 2.12's page says <html lang="en"> whatever the browser's language, while glm1m's
// sentences and Chainlit's own labels follow the browser's first language (chainlit_app/i18n.py:
// any "zh" tag reads Chinese). Say the page's real language, for screen readers, fonts and the
// browser's offer to translate. Loaded through .chainlit/config.toml's custom_js.
(function () {
  var first = ((navigator.languages && navigator.languages[0]) || navigator.language || "en").toLowerCase();
  var zh = first.indexOf("zh") === 0;
  document.documentElement.lang = zh ? "zh-CN" : "en";
  // The words Chainlit's frontend writes in English with no translation key: said in Chinese
  // there (zh_chainlit.js says which and why). Chainlit takes one custom_js: this one loads it.
  if (zh) {
    var script = document.createElement("script");
    script.src = (document.currentScript ? new URL("zh_chainlit.js", document.currentScript.src).href
                  : "/public/zh_chainlit.js");
    document.head.appendChild(script);
  }
})();
