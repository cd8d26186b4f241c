/* Small helpers the site's scripts share (replay.js, live.js): building elements and writing
 * amounts. Plain JavaScript, nothing loaded from another site; it defines `window.GrassDom`
 * and must be loaded before the scripts that use it.
 */
(function () {
  "use strict";

  /* An element with attributes (`text` sets its text, `className` its class; null, undefined
   * and false leave an attribute out, true sets it empty) and children (nodes or strings). */
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) return;
      if (name === "text") node.textContent = value;
      else if (name === "className") node.className = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    });
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) {
        node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
      }
    });
    return node;
  }

  function money(amount) {
    var sign = amount < 0 ? "-" : "";
    return sign + "$" + Math.abs(amount).toLocaleString("en-US");
  }

  function plural(count, word) {
    return count + " " + word + (count === 1 ? "" : "s");
  }

  window.GrassDom = { el: el, money: money, plural: plural };
})();
