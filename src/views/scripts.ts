/**
 * The few scripts our pages run, served as same-origin files: the pages' CSP is script-src 'self', so
 * no inline script ever runs.
 */
export const FORM_POST_SCRIPT_PATH = '/auth/resources/form-post.js';

/** Submits the form-post response at once (Form Post Response Mode 2). */
export const FORM_POST_SCRIPT = `'use strict';
document.getElementById('form-post').submit();
`;
