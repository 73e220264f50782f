// Progressive enhancement only: every page works without this file.
// A "Copy" button next to a secret shown once copies it to the clipboard.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(
    () => { button.textContent = 'Copied'; },
    () => { button.textContent = 'Copy failed: select the text'; },
  );
});
