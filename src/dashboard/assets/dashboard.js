// The dashboard's only script, an enhancement; every page works without it.
// - A copy button beside a secret shown once (a new key, the webhook secret). Without JavaScript the
//   secret can still be selected and copied from its field.
// - Try it's upload with its progress: the form is sent with XMLHttpRequest (same origin, as the
//   CSP's connect-src allows), its upload events drive a progress bar and a percentage, the submit
//   button is disabled meanwhile, and a cancel button aborts it (nothing is charged: the quota unit
//   is reserved only once the whole file is in). The page that answers (the result, or the refusal
//   with the form as it was sent) replaces this page's main content.
/* global document, navigator, XMLHttpRequest, FormData */
/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call -- a browser script; the project's TypeScript setup has no DOM types */

function enableCopyButtons(root) {
  for (const button of root.querySelectorAll("button[data-copy]")) {
    const field = document.getElementById(button.dataset.copy);
    // The status line after the button's field (a page may have several), else the page's first.
    const next = button.parentElement && button.parentElement.nextElementSibling;
    const status = next && next.matches("[data-copy-status]") ? next : root.querySelector("[data-copy-status]");
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
}

/** Puts the answered page's main content (and title) in place of this one's, then enhances it. */
function showAnswer(answer) {
  const main = document.querySelector("main");
  const next = answer && answer.querySelector("main");
  if (!main || !next) return false;
  document.title = answer.title;
  main.replaceChildren(...next.childNodes);
  enhance(main);
  // The result or the refusal first, for a screen reader and for the eye.
  const first = main.querySelector(".notice") || main.querySelector("h1");
  if (first) {
    first.setAttribute("tabindex", "-1");
    first.focus();
  }
  return true;
}

function enhanceUpload(form) {
  const box = form.querySelector("[data-upload-progress]");
  const bar = form.querySelector("#upload-bar");
  const percent = form.querySelector("[data-upload-percent]");
  const status = form.querySelector("[data-upload-status]");
  const cancel = form.querySelector("[data-upload-cancel]");
  const submit = form.querySelector('button[type="submit"]');
  if (!box || !bar || !percent || !status || !cancel || !submit) return;
  let request = null;

  const settle = (message) => {
    request = null;
    box.hidden = true;
    submit.disabled = false;
    status.textContent = message;
  };
  const show = (fraction) => {
    const value = Math.floor(fraction * 100);
    bar.value = value;
    percent.textContent = `${value} %`;
  };

  cancel.addEventListener("click", () => {
    if (!request) return;
    request.abort();
    settle("Upload cancelled: nothing was sent on to compression or charged.");
  });

  form.addEventListener("submit", (event) => {
    if (request) {
      event.preventDefault();
      return;
    }
    // FormData keeps the form's order: the key, profile and options go before the file.
    const body = new FormData(form);
    event.preventDefault();
    request = new XMLHttpRequest();
    const sent = request;
    sent.open("POST", form.action);
    sent.responseType = "document";
    sent.setRequestHeader("Accept", "text/html");
    sent.upload.addEventListener("progress", (progress) => {
      if (progress.lengthComputable) show(progress.loaded / progress.total);
    });
    sent.upload.addEventListener("load", () => {
      if (sent !== request) return;
      show(1);
      status.textContent = "Uploaded. Compressing…";
    });
    sent.addEventListener("load", () => {
      if (sent !== request) return;
      request = null;
      if (!showAnswer(sent.response)) settle(`The dashboard answered ${sent.status}; reload the page and try again.`);
    });
    sent.addEventListener("error", () => {
      if (sent === request) settle("The upload failed: the connection was lost. Try again.");
    });
    submit.disabled = true;
    // The last answer (a result, or a refusal) is about the previous file: gone while this one goes.
    const answer = document.querySelector("[data-try-answer]");
    if (answer) answer.replaceChildren();
    show(0);
    box.hidden = false;
    status.textContent = "Uploading…";
    sent.send(body);
  });
}

function enhance(root) {
  enableCopyButtons(root);
  for (const form of root.querySelectorAll("form[data-try]")) enhanceUpload(form);
}

enhance(document);
