# Reference values for pkg/measure's person fit (TestPersonFitMatchesERm), from an independent
# implementation: R's eRm (Debian: apt-get install r-base-core r-cran-erm).
#
# Regenerate from pkg/measure/testdata/erm:
#   Rscript personfit.R
# It writes personfit.csv: for each case (a simulated data set), the items' difficulties and,
# for every person eRm gives a fit (neither zero nor perfect), the response pattern, eRm's own
# ability (thetapar, an nlm MLE) and eRm's personfit figures. The data are simulated here with
# fixed seeds, so a rerun reproduces the file.
#
# eRm's betapar are easiness parameters: the difficulty is -betapar (logits). The test feeds
# eRm's thetapar and these difficulties into Framework.PersonFit with s = 1 and m = 0.5, so both
# sides evaluate the same formulas at the same point and must agree to 1e-6.
suppressPackageStartupMessages(library(eRm))

simulate <- function(seed, persons, beta, guess = 0, blank = 0) {
  set.seed(seed)
  k <- length(beta)
  theta <- rnorm(persons)
  p <- plogis(outer(theta, beta, "-"))
  # Some persons guess (right with chance 1/4) on the hardest third of the items.
  guessers <- runif(persons) < guess
  hard <- beta >= quantile(beta, 2 / 3)
  p[guessers, hard] <- 0.25
  x <- matrix(as.integer(runif(persons * k) < p), persons, k)
  if (blank > 0) x[matrix(runif(persons * k) < blank, persons, k)] <- NA
  colnames(x) <- sprintf("I%02d", seq_len(k))
  rownames(x) <- sprintf("P%03d", seq_len(persons))
  x
}

cases <- list(
  model   = simulate(21, 150, seq(-2, 2, length.out = 20)),
  guess   = simulate(22, 150, seq(-2, 2, length.out = 40), guess = 0.3),
  short   = simulate(23, 200, c(-1.5, -0.8, -0.2, 0.3, 0.9, 1.6)),
  blanks  = simulate(24, 150, qnorm(seq(0.05, 0.95, length.out = 15)) * 1.5, blank = 0.15)
)

con <- file("personfit.csv", "w")
writeLines(sprintf("# eRm %s, R %s: RM + person.parameter + personfit; difficulty = -betapar; theta = thetapar",
                   packageVersion("eRm"), getRversion()), con)
writeLines("# rows: case,item,ID,difficulty | case,person,ID,theta,responses(0/1/. per item),infit,outfit,infitZ,outfitZ", con)
writeLines("case,kind,id,value,responses,infit,outfit,infit_z,outfit_z", con)
f <- function(v) sprintf("%.12f", v)
for (name in names(cases)) {
  x <- cases[[name]]
  m <- RM(x)
  pp <- person.parameter(m)
  pf <- personfit(pp)
  d <- -m$betapar
  for (i in seq_along(d)) writeLines(paste(name, "item", colnames(x)[i], f(d[i]), "", "", "", "", "", sep = ","), con)
  theta <- pp$theta.table[, "Person Parameter"]
  names(theta) <- rownames(pp$theta.table)
  for (p in names(pf$p.infitMSQ)) {
    r <- x[p, ]
    pattern <- paste(ifelse(is.na(r), ".", r), collapse = "")
    writeLines(paste(name, "person", p, f(theta[p]), pattern, f(pf$p.infitMSQ[p]), f(pf$p.outfitMSQ[p]),
                     f(pf$p.infitZ[p]), f(pf$p.outfitZ[p]), sep = ","), con)
  }
  cat(sprintf("%s: %d persons with fit, %d items\n", name, length(pf$p.infitMSQ), ncol(x)))
}
close(con)
