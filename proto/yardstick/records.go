package yardstick

import "strings"

// RecordField is the field of a gRPC batch record (ScoringService.ScoreBatch,
// ForecastService.ForecastBatch) that holds a request of the rpc named rpc, the method's name:
// ScoreItemIds → score_item_ids. The contract names every record field this way; the serving
// frame checks at start-up that each unary rpc has its field.
func RecordField(rpc string) string {
	var b strings.Builder
	for i, r := range rpc {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
