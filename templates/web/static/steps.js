// Arrow keys and Home/End step through the positions of a board's page: the same as its
// First / Previous / Next / Last links, which work without this script.
(function () {
  "use strict";
  var steps = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.defaultPrevented) {
      return;
    }
    var target = event.target;
    if (target && target.closest && target.closest("pre")) {
      return; // the text diagram scrolls with the arrow keys
    }
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      return;
    }
    var step = steps[event.key];
    if (!step) {
      return;
    }
    var link = document.querySelector('nav.steps a[data-step="' + step + '"]');
    if (link) {
      event.preventDefault();
      window.location.assign(link.href);
    }
  });
})();
