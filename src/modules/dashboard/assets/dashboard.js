// Progressive enhancement only: every page works without this file.
// A "Copy" button next to a secret shown once copies it to the clipboard.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  // The button says how it went, then takes its own name back ("Copy", "Copy as curl"): a second copy finds it by name.
  const name = button.getAttribute('data-name') || button.textContent;
  button.setAttribute('data-name', name);
  const say = (text, ms) => {
    button.textContent = text;
    setTimeout(() => { button.textContent = name; }, ms);
  };
  navigator.clipboard.writeText(source.textContent.trim()).then(
    () => say('Copied', 2000),
    () => say('Copy failed: select the text', 5000),
  );
});

// The live tail (Events, Logs): each answer of the held request brings the next poller (htmx
// swaps it in). Should one fail, the tail polls every 2 s instead (wait=0: answered at once,
// the server's next poller then waits 2 s before asking); without this file, the Refresh link.
document.addEventListener('htmx:configRequest', (event) => {
  const element = event.detail && event.detail.elt;
  if (element instanceof Element && element.hasAttribute('data-tail-failed')) event.detail.parameters.wait = '0';
});
const tailFailed = (event) => {
  const element = event.detail && event.detail.elt;
  if (!(element instanceof Element) || !element.hasAttribute('data-tail')) return;
  element.setAttribute('data-tail-failed', '');
  setTimeout(() => element.dispatchEvent(new Event('tail-retry')), 2000);
};
document.addEventListener('htmx:responseError', tailFailed);
document.addEventListener('htmx:sendError', tailFailed);
