// Package forecast implements the forecast service's rpcs: a student's or a group's future
// measure with the probability of each performance band. Handlers validate (every problem at once,
// named by field path), compute with pkg/measure and reply. The group forecast streams
// (groupstream.go) answer the group one student a line, on measure.GroupAccumulator.
package forecast
