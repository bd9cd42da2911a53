module github.com/yardstick-dev/yardstick/services/scoring

go 1.25.0
