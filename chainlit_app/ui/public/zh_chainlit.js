// Chainlit 2.12's frontend writes a few of its words in English itself, with no key in
// .chainlit/translations (those cover the rest of its page): the PDF preview's loading and failure
// lines and titles, and the screen-reader labels of the theme switch and the dialogs' close button.
// No setting or hook replaces them, so on a Chinese page (lang.js loads this file there) they are
// said again in Chinese as they appear: text nodes and labelling attributes that read exactly one
// of these strings. tests/unit/test_zh_chainlit_js.py fails when a Chainlit release no longer
// writes one of them (its bundle, frontend/dist/assets/index-*.js, is searched for each).
(function () {
  // WORDS START (one "English": "中文" a line; the test reads these lines)
  var WORDS = {
    "Loading preview...": "正在加载预览…",
    "Loading PDF...": "正在加载 PDF…",
    "Loading PDF…": "正在加载 PDF…",
    "Loading page…": "正在加载页面…",
    "Failed to load PDF file.": "无法加载 PDF 文件。",
    "Failed to load the page.": "无法加载该页。",
    "No PDF file specified.": "未指定 PDF 文件。",
    "No page specified.": "未指定页面。",
    "Open PDF in a larger view": "放大查看 PDF",
    "Download PDF": "下载 PDF",
    "Print/Open PDF": "打印或打开 PDF",
    "View PDF": "查看 PDF",
    "PDF Document": "PDF 文档",
    "Toggle theme": "切换主题",
    "Close": "关闭",
    "Toggle Sidebar": "切换侧边栏",
    "A modal with a larger view of the PDF.": "放大查看 PDF 的对话框。",
    "Raw code": "原文",
    "Today": "今天",
    "Yesterday": "昨天",
    "Previous 7 days": "过去 7 天",
    "Previous 30 days": "过去 30 天"
  };
  // WORDS END
  // Words Chainlit writes around a name: [its English before the name, the Chinese after it].
  var AROUND = {"Avatar for ": " 的头像"};

  function said(text) {
    var key = text.trim();
    if (Object.prototype.hasOwnProperty.call(WORDS, key)) return WORDS[key];
    for (var before in AROUND) {
      if (key.indexOf(before) === 0 && key.length > before.length) return key.slice(before.length) + AROUND[before];
    }
    return null;
  }
  var ATTRIBUTES = ["aria-label", "title", "placeholder", "alt"];

  function translateElement(element) {
    for (var i = 0; i < ATTRIBUTES.length; i++) {
      var value = element.getAttribute(ATTRIBUTES[i]);
      var chinese = value ? said(value) : null;
      if (chinese !== null) element.setAttribute(ATTRIBUTES[i], chinese);
    }
  }

  function translate(node) {
    if (node.nodeType === Node.TEXT_NODE) {
      var chinese = said(node.nodeValue);
      if (chinese !== null) node.nodeValue = chinese;
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    translateElement(node);
    var all = node.querySelectorAll("*");
    for (var i = 0; i < all.length; i++) translateElement(all[i]);
    var walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (var t = walker.nextNode(); t; t = walker.nextNode()) translate(t);
  }

  function start() {
    translate(document.body);
    new MutationObserver(function (changes) {
      for (var i = 0; i < changes.length; i++) {
        var change = changes[i];
        if (change.type === "childList") {
          for (var j = 0; j < change.addedNodes.length; j++) translate(change.addedNodes[j]);
        } else if (change.type === "attributes") {
          translateElement(change.target);
        } else {
          translate(change.target);  // characterData: the text node
        }
      }
    }).observe(document.body, {childList: true, subtree: true, characterData: true,
                               attributes: true, attributeFilter: ATTRIBUTES});
  }

  if (document.body) start(); else document.addEventListener("DOMContentLoaded", start);
})();
