// Session export page: pick a branch in the tree, the conversation shows that branch.
// Every entry is one element, either in #conversation (the shown branch, in order) or in the
// hidden #store; switching branches only moves elements, nothing is rendered here.
"use strict";
(function () {
  var conversation = document.getElementById("conversation");
  var store = document.getElementById("store");
  var items = Array.prototype.slice.call(document.querySelectorAll("#tree li"));
  var nodes = {};
  items.forEach(function (li) {
    nodes[li.dataset.key] = { li: li, parent: li.dataset.parent || null, children: [] };
  });
  // The tree lists children oldest first, so the last child is the newest.
  items.forEach(function (li) {
    var parent = nodes[li.dataset.parent];
    if (parent) parent.children.push(li.dataset.key);
  });

  function pathTo(key) {
    var path = [];
    var seen = {};
    while (key && nodes[key] && !seen[key]) {
      seen[key] = true;
      path.push(key);
      key = nodes[key].parent;
    }
    return path.reverse();
  }

  // Down from `key` to a leaf: stay on the shown branch where it continues, else take the
  // newest child (what a reader who clicked an older message most likely wants to see).
  function leafBelow(key, shown) {
    var seen = {};
    while (nodes[key] && nodes[key].children.length && !seen[key]) {
      seen[key] = true;
      var children = nodes[key].children;
      var next = children[children.length - 1];
      for (var i = 0; i < children.length; i++) {
        if (shown[children[i]]) next = children[i];
      }
      key = next;
    }
    return key;
  }

  function shownKeys() {
    var shown = {};
    pathTo(conversation.dataset.leaf).forEach(function (key) { shown[key] = true; });
    return shown;
  }

  function show(key, selected) {
    if (!nodes[key]) {
      conversation.dataset.rendered = "script";
      return;
    }
    var path = pathTo(leafBelow(key, shownKeys()));
    var empty = document.getElementById("empty");
    if (empty) empty.remove();
    while (conversation.firstElementChild) store.appendChild(conversation.firstElementChild);
    var onPath = {};
    path.forEach(function (k) {
      onPath[k] = true;
      var element = document.getElementById("e-" + k);
      if (element) conversation.appendChild(element);
    });
    var leaf = path[path.length - 1] || "";
    items.forEach(function (li) {
      var k = li.dataset.key;
      li.classList.toggle("on-path", !!onPath[k]);
      li.classList.toggle("current", k === leaf);
      li.classList.toggle("selected", k === selected);
    });
    conversation.dataset.leaf = leaf;
    conversation.dataset.rendered = "script";
  }

  function reveal(key) {
    var element = document.getElementById("e-" + key);
    if (!element) return;
    var target = element.classList.contains("anchor") && element.previousElementSibling
      ? element.previousElementSibling : element;
    target.classList.add("flash");
    setTimeout(function () { target.classList.remove("flash"); }, 1200);
    target.scrollIntoView({ block: "start" });
  }

  document.getElementById("tree").addEventListener("click", function (event) {
    var link = event.target.closest("a");
    if (!link) return;
    event.preventDefault();
    var key = link.parentElement.dataset.key;
    show(key, key);
    history.replaceState(null, "", "#e-" + encodeURIComponent(key));
    reveal(key);
  });

  // The full line on hover, added only then: a title on every line would double the tree's size.
  document.getElementById("tree").addEventListener("mouseover", function (event) {
    var link = event.target.closest("a");
    if (link && !link.title) link.title = link.textContent;
  });

  document.getElementById("tree-filter").addEventListener("input", function (event) {
    var query = event.target.value.trim().toLowerCase();
    items.forEach(function (li) {
      li.hidden = query !== "" && li.textContent.toLowerCase().indexOf(query) < 0;
    });
  });

  function setOpen(open) {
    conversation.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  document.getElementById("expand-all").addEventListener("click", function () { setOpen(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { setOpen(false); });

  // A link to an entry (#e-<key>) opens its branch; otherwise the exported leaf stays.
  var wanted = null;
  if (location.hash.indexOf("#e-") === 0) {
    try { wanted = decodeURIComponent(location.hash.slice(3)); } catch (e) { wanted = null; }
  }
  if (wanted && nodes[wanted]) {
    show(wanted, wanted);
    reveal(wanted);
  } else {
    show(conversation.dataset.leaf || "", null);
  }
  document.documentElement.classList.add("js");
})();
