/** The workspace folder where files received from outside (e.g. sent by Telegram) are saved. */
export const INBOX_DIR = "inbox"

/** Whether a workspace-relative path is inside the inbox: content there came from outside, whoever names it. */
export const isInboxPath = (path: string): boolean => /^(?:\.\/)*inbox(?:\/|$)/.test(path.replace(/\\/g, "/"))
