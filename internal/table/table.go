package table

import (
	"io"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// Column describes one column of a table.
type Column struct {
	Header string
	// Min is how narrow the column may be cut, with an ellipsis, when the
	// table is too wide; 0 means it is never cut.
	Min int
	// Drop ranks the column for dropping when cutting is not enough: the
	// lowest rank goes first; 0 means it is never dropped.
	Drop int
	// Right aligns the column to the right (numbers).
	Right bool
}

// Cell is one cell: its text, and the SGR parameters that colour it on a
// terminal ("32" for green; "" for none).
type Cell struct {
	Text  string
	Color string
}

// Table is a header and rows, each row one cell per column.
type Table struct {
	Columns []Column
	Rows    [][]Cell
}

// gap is the space between two columns.
const gap = 2

// Layout decides each column's width for a table whose columns need
// natural cells at most, to fit in width cells (0: no limit). A width of 0
// in the result means the column is dropped. When even the minimums do not
// fit once every droppable column is gone, the cuttable columns are cut
// further, down to one cell; what still does not fit is the narrowest
// layout there is.
func Layout(cols []Column, natural []int, width int) []int {
	w := slices.Clone(natural)
	if width <= 0 || total(w) <= width {
		return w
	}
	for {
		// Cut the columns that may be cut, the leftmost first: the last
		// column is the free text that deserves what room is left.
		for i := 0; i < len(cols) && total(w) > width; i++ {
			if cols[i].Min > 0 && w[i] > cols[i].Min {
				w[i] = max(cols[i].Min, w[i]-(total(w)-width))
			}
		}
		if total(w) <= width {
			return w
		}
		drop := -1
		for i, c := range cols {
			if w[i] > 0 && c.Drop > 0 && (drop < 0 || c.Drop < cols[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			// Nothing left to drop: cut past the minimum, the last
			// column first, rather than wrap.
			for i := len(cols) - 1; i >= 0 && total(w) > width; i-- {
				if cols[i].Min > 0 && w[i] > 0 {
					w[i] = max(1, w[i]-(total(w)-width))
				}
			}
			return w
		}
		// Drop it, and give the cut columns their room back before
		// cutting again for what is left.
		for i := range w {
			if w[i] > 0 {
				w[i] = natural[i]
			}
		}
		w[drop] = 0
	}
}

// total is the width of a row laid out with widths w.
func total(w []int) int {
	n, shown := 0, 0
	for _, x := range w {
		if x > 0 {
			n += x
			shown++
		}
	}
	if shown > 1 {
		n += gap * (shown - 1)
	}
	return n
}

// Render writes the table laid out to fit width (0: no limit), colouring
// cells when color is set.
func (t Table) Render(out io.Writer, width int, color bool) error {
	header := make([]Cell, len(t.Columns))
	natural := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = Cell{Text: c.Header}
		natural[i] = Width(c.Header)
	}
	rows := make([][]Cell, len(t.Rows))
	for r, row := range t.Rows {
		rows[r] = make([]Cell, len(t.Columns))
		for i := range t.Columns {
			if i < len(row) {
				rows[r][i] = Cell{Text: Clean(row[i].Text), Color: row[i].Color}
			}
			natural[i] = max(natural[i], Width(rows[r][i].Text))
		}
	}
	widths := Layout(t.Columns, natural, width)
	last := -1
	for i, w := range widths {
		if w > 0 {
			last = i
		}
	}
	var b strings.Builder
	for _, row := range append([][]Cell{header}, rows...) {
		first := true
		for i, cell := range row {
			w := widths[i]
			if w == 0 {
				continue
			}
			if !first {
				b.WriteString(strings.Repeat(" ", gap))
			}
			first = false
			text := Cut(cell.Text, w)
			pad := strings.Repeat(" ", w-Width(text))
			if i == last && !t.Columns[i].Right {
				pad = ""
			}
			if color && cell.Color != "" {
				text = "\x1b[" + cell.Color + "m" + text + "\x1b[0m"
			}
			if t.Columns[i].Right {
				b.WriteString(pad + text)
			} else {
				b.WriteString(text + pad)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// Width is how many terminal cells s takes.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	if unicode.Is(unicode.Mn, r) {
		return 0 // a combining mark sits on the character before it
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// Cut shortens s to at most n cells, ending it with an ellipsis when
// anything was cut.
func Cut(s string, n int) string {
	if Width(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := runeWidth(r)
		if used+w > n-1 {
			break
		}
		b.WriteRune(r)
		used += w
	}
	return b.String() + "…"
}

// Clean makes s safe and flat for one line of a terminal: control
// characters (newlines, tabs, escapes) become spaces, runs of spaces one.
func Clean(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) && !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == ' ' }), " ")
}
