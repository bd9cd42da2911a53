// Package measure is Yardstick's measurement library: the scale model, the standard and Bayes
// estimators, growth, linking of external scale scores, strands, forecasts and display rules of
// METHOD.md, and the content bundle (frameworks, item bank, link tables, forms and strand
// benchmarks) they run on, with an embedded demonstration bundle. It knows nothing of gRPC or
// HTTP; see README.md for the method decisions, the bundle format and performance figures.
package measure
