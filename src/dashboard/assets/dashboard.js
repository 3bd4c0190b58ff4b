// The dashboard's only script, an enhancement: a copy button beside a key shown once. Without
// JavaScript the key can still be selected and copied from its field.
/* global document, navigator */
/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call -- a browser script; the project's TypeScript setup has no DOM types */
for (const button of document.querySelectorAll("button[data-copy]")) {
  const field = document.getElementById(button.dataset.copy);
  const status = document.querySelector("[data-copy-status]");
  if (!field) continue;
  const say = (text) => {
    if (status) status.textContent = text;
  };
  button.hidden = false;
  button.addEventListener("click", () => {
    // The clipboard API exists only in secure contexts (HTTPS, localhost).
    const copied = navigator.clipboard
      ? navigator.clipboard.writeText(field.value)
      : Promise.reject(new Error("no clipboard"));
    copied.then(
      () => say("Copied to the clipboard."),
      () => {
        field.select();
        say("Selected: press Ctrl+C (or ⌘C) to copy.");
      },
    );
  });
}
