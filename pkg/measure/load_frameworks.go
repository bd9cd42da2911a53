package measure

// subject checks a framework row's subject: empty, or reading or math, at most one framework a
// subject (the forecast paths of a subject serve its one framework).
func (l *loader) subject(r row, f *Framework) bool {
	switch f.Subject {
	case "":
		return true
	case SubjectReading, SubjectMath:
	default:
		l.p.at(r, "subject %q is not %q, %q or empty", f.Subject, SubjectReading, SubjectMath)
		return false
	}
	for other, fr := range l.fwLine {
		if other != f.Name && fr.fields["subject"] == f.Subject {
			l.p.at(r, "subject %q is also framework %q's (line %d); a subject has at most one framework", f.Subject, other, fr.line)
			return false
		}
	}
	return true
}

// normCurve checks a framework's grades.csv rows (seen): none (no norm curve; each grade's cap
// is the framework's display_max) or all 13, the medians increasing.
func (l *loader) normCurve(f *Framework, seen map[benchKey]row) bool {
	name, rows := f.Name, 0
	for g := 0; g < Grades; g++ {
		if _, ok := seen[benchKey{framework: name, grade: g}]; ok {
			rows++
		}
	}
	if rows == 0 {
		f.Norm = nil
		for g := range f.GradeMax {
			f.GradeMax[g] = f.DisplayMax
		}
		return true
	}
	complete := true
	for g := 0; g < Grades; g++ {
		if _, ok := seen[benchKey{framework: name, grade: g}]; !ok {
			l.p.add("grades.csv", 0, "%s grade %d missing (a framework has all 13 grades 0-12 or none)", name, g)
			complete = false
		} else if g > 0 && complete && f.Norm[g] <= f.Norm[g-1] {
			l.p.at(seen[benchKey{framework: name, grade: g}], "%s norm %v at grade %d is not above %v at grade %d; the norm curve must increase",
				name, f.Norm[g], g, f.Norm[g-1], g-1)
			complete = false
		}
	}
	return complete
}
