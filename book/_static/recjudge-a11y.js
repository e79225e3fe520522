// Accessibility repairs the theme's markup needs, run once the page is laid out (the browser test's axe-core check
// fails without them):
// - a table or code box that scrolls sideways gets a keyboard tab stop and a name, so that a reader without a mouse
//   can scroll it (WCAG 2.1.1; axe: scrollable-region-focusable);
// - the search field's button is named by its visible text ("Search Ctrl+K"), and the colour-mode button, which
//   shows only icons, by a visually hidden "Color mode" in place of its aria-label, its icons (Font Awesome turns
//   each <i title="Light"> into an <svg> with a <title>) hidden from screen readers: what is seen is what is
//   announced (WCAG 2.5.3; axe: label-content-name-mismatch).
(function () {
  "use strict";
  function markScrollBoxes() {
    document.querySelectorAll("article div, article pre, article table").forEach(function (box) {
      var style = getComputedStyle(box);
      var scrolls = (style.overflowX === "auto" || style.overflowX === "scroll") && box.scrollWidth > box.clientWidth;
      if (!scrolls || box.hasAttribute("tabindex")) return;
      var caption = box.querySelector("caption");
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-recjudge-scroll", "");
      if (!box.hasAttribute("role")) box.setAttribute("role", "region");
      box.setAttribute("aria-label", caption ? caption.textContent.replace(/\s+/g, " ").trim() : "Scrollable content");
    });
  }
  function nameButtonsByWhatTheyShow() {
    document.querySelectorAll("button.search-button-field").forEach(function (button) {
      button.removeAttribute("aria-label");
    });
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      var name = button.getAttribute("aria-label") || "Color mode";
      button.removeAttribute("aria-label");
      if (!button.querySelector(".recjudge-button-name")) {
        var text = document.createElement("span");
        text.className = "recjudge-button-name visually-hidden";
        text.textContent = name;
        button.appendChild(text);
      }
      button.querySelectorAll("i, svg").forEach(function (icon) {
        icon.setAttribute("aria-hidden", "true");
        icon.removeAttribute("title");
        icon.removeAttribute("aria-labelledby");
        icon.removeAttribute("role");
      });
    });
  }
  function repair() {
    nameButtonsByWhatTheyShow();
    markScrollBoxes();
    // Display maths is typeset after the page loads: its boxes are measured again once MathJax has finished.
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(markScrollBoxes);
  }
  if (document.readyState === "complete") repair(); else window.addEventListener("load", repair);
  window.addEventListener("resize", markScrollBoxes);
})();
