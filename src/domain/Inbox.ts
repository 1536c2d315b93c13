/** The workspace folder where files received from outside (e.g. sent by Telegram) are saved. */
export const INBOX_DIR = "inbox"
