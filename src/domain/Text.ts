/** At most `max` characters of `text`, an ellipsis marking a cut. */
export const truncateEnd = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max)}…`
