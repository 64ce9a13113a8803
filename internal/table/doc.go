// Package table lays out the text tables tether-sweep prints for people.
//
// Its promises:
//   - Columns line up by what a terminal shows: colour escapes are added
//     outside the padding and never counted, wide (East Asian) characters
//     count two cells, and control characters in a cell — a prompt is
//     untrusted text — are shown as spaces, never sent to the terminal.
//   - A table fits the width it is given: columns that may be cut are cut
//     with an ellipsis down to their minimum, then the least useful columns
//     are dropped, then the cut columns are cut further, until it fits or
//     nothing more can go. Width 0 means no limit (output to a pipe or a
//     file).
//   - No trailing spaces: the last column is not padded.
//
// Layout is a pure function of the columns, their natural widths and the
// width available, so the decisions are table-tested on their own.
package table
