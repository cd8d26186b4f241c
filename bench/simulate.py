"""How well do ratings recover hidden skills?  Our Elo against OpenSkill and TrueSkill.

Run ``python -m bench.simulate`` (``--help`` for the options).  For each seed:

1. Every bot gets a hidden true skill ``theta ~ Normal(0, skill_sd)`` (natural-log strength: a bot
   ``theta`` ahead beats the other head-to-head with odds ``e ** theta``; ``skill_sd = 1`` is a
   spread of about 174 Elo points).
2. Each game seats a uniformly random set of distinct bots -- a fixed number of seats, or a number
   drawn uniformly from a range such as 2-6 -- and draws their finishing order from Plackett-Luce
   with strengths ``e ** theta`` (Gumbel trick: sort ``theta + Gumbel noise``).
3. The same games, in the same order, are rated by our Elo (:func:`ladder.ratings.elo.recompute`),
   by OpenSkill's Plackett-Luce model and by TrueSkill, each with the library's defaults.
4. Each system's final point estimates (``mu``) are compared with the true skills by Kendall's tau.

The table gives mean, standard deviation, minimum and maximum of tau over the seeds, and the paired
difference of our tau minus TrueSkill's on the same games.  It also reports how often our
``mu +/- 2 * deviation`` band covers the bot's true skill on the Elo scale (after removing the
common offset, which the ratings cannot know), which checks the band's width.

``openskill`` and ``trueskill`` are dev dependencies; only this module needs them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ladder.ratings.elo import (
    DEFAULT_PARAMS,
    MAX_SEATS,
    MIN_SEATS,
    EloParams,
    deviation,
    recompute,
)

__all__ = [
    "SYSTEMS",
    "Scenario",
    "ScenarioReport",
    "SeedResult",
    "Summary",
    "kendall_tau",
    "main",
    "plackett_luce_places",
    "rate_elo",
    "rate_openskill",
    "rate_trueskill",
    "run_scenario",
    "run_seed",
    "simulate_games",
]

Game = list[tuple[int, int]]
"""One game: ``(player_id, place)`` per seat, places 1-based."""

SYSTEMS = ("elo", "openskill", "trueskill")
"""The systems every run reports, in table order."""

SYSTEM_LABELS = {
    "elo": "our Elo",
    "openskill": "OpenSkill PL",
    "trueskill": "TrueSkill",
}


@dataclass(frozen=True, slots=True)
class Scenario:
    """One simulated ladder: how many bots, games and seats, and over how many seeds."""

    players: int = 50
    games: int = 2000
    min_seats: int = 4
    max_seats: int = 4
    seeds: int = 10
    first_seed: int = 1
    skill_sd: float = 1.0

    def __post_init__(self) -> None:
        if not MIN_SEATS <= self.min_seats <= self.max_seats <= MAX_SEATS:
            raise ValueError(
                f"seats must satisfy {MIN_SEATS} <= min <= max <= {MAX_SEATS}, "
                f"got {self.min_seats}-{self.max_seats}"
            )
        if self.players < self.max_seats:
            raise ValueError(f"need at least {self.max_seats} players, got {self.players}")
        if self.games < 1 or self.seeds < 1:
            raise ValueError("games and seeds must be at least 1")
        if not self.skill_sd > 0:
            raise ValueError(f"skill_sd must be positive, got {self.skill_sd!r}")

    @property
    def seats_label(self) -> str:
        if self.min_seats == self.max_seats:
            return str(self.min_seats)
        return f"{self.min_seats}-{self.max_seats}"


def plackett_luce_places(rng: random.Random, skills: Sequence[float]) -> list[int]:
    """Finishing places (1 = first) of players of log-strengths ``skills``, from Plackett-Luce.

    Sorting ``skill + Gumbel noise`` in descending order gives exactly the Plackett-Luce order:
    first place goes to player ``i`` with probability ``e**skill_i / sum(e**skill)``, and so on.
    """
    keys = [skill - math.log(-math.log(1.0 - rng.random())) for skill in skills]
    order = sorted(range(len(skills)), key=lambda i: keys[i], reverse=True)
    places = [0] * len(skills)
    for place, i in enumerate(order, start=1):
        places[i] = place
    return places


def simulate_games(rng: random.Random, scenario: Scenario) -> tuple[list[float], list[Game]]:
    """Draw hidden skills and a history of games for one seed."""
    skills = [rng.gauss(0.0, scenario.skill_sd) for _ in range(scenario.players)]
    history: list[Game] = []
    for _ in range(scenario.games):
        seats = rng.randint(scenario.min_seats, scenario.max_seats)
        players = rng.sample(range(scenario.players), seats)
        places = plackett_luce_places(rng, [skills[p] for p in players])
        history.append(list(zip(players, places, strict=True)))
    return skills, history


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b between two equally long sequences (handles ties, like scipy's default).

    Quadratic, which is plenty for a ladder of a few hundred bots.
    """
    if len(x) != len(y):
        raise ValueError(f"kendall_tau needs sequences of equal length, got {len(x)} and {len(y)}")
    concordant_minus_discordant = 0
    pairs_untied_x = 0
    pairs_untied_y = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            concordant_minus_discordant += dx * dy
            pairs_untied_x += dx != 0
            pairs_untied_y += dy != 0
    if pairs_untied_x == 0 or pairs_untied_y == 0:
        return math.nan
    return concordant_minus_discordant / math.sqrt(pairs_untied_x * pairs_untied_y)


def rate_elo(
    players: int, history: Sequence[Game], params: EloParams = DEFAULT_PARAMS
) -> tuple[list[float], list[float]]:
    """Our ratings after ``history``: each player's ``mu`` and deviation, by player id."""
    table = recompute(history, params).ratings
    ratings = [table.get(p, params.new_rating()) for p in range(players)]
    return [r.mu for r in ratings], [deviation(r, params) for r in ratings]


def rate_openskill(players: int, history: Sequence[Game]) -> list[float]:
    """OpenSkill Plackett-Luce ``mu`` after ``history``, library defaults."""
    try:
        from openskill.models import PlackettLuce
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise SystemExit(_missing("openskill")) from error
    model = PlackettLuce()
    table = [model.rating() for _ in range(players)]
    for game in history:
        teams = [[table[p]] for p, _ in game]
        rated = model.rate(teams, ranks=[float(place) for _, place in game])
        for (p, _), (new,) in zip(game, rated, strict=True):
            table[p] = new
    return [float(r.mu) for r in table]


def rate_trueskill(players: int, history: Sequence[Game]) -> list[float]:
    """TrueSkill ``mu`` after ``history``, library defaults (pure-Python backend)."""
    try:
        import trueskill  # type: ignore[import-untyped]  # the package ships no type hints
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise SystemExit(_missing("trueskill")) from error
    env = trueskill.TrueSkill()
    table = [env.create_rating() for _ in range(players)]
    for game in history:
        groups = [(table[p],) for p, _ in game]
        rated = env.rate(groups, ranks=[place for _, place in game])
        for (p, _), (new,) in zip(game, rated, strict=True):
            table[p] = new
    return [float(r.mu) for r in table]


def _missing(package: str) -> str:
    return (
        f"the simulation needs the '{package}' package, a dev dependency: pip install -e '.[dev]'"
    )


@dataclass(frozen=True, slots=True)
class SeedResult:
    """One seed: Kendall tau per system, and how often our 2-deviation band covered the truth."""

    seed: int
    tau: dict[str, float]
    band_coverage: float
    seconds: dict[str, float]


def run_seed(scenario: Scenario, seed: int, params: EloParams = DEFAULT_PARAMS) -> SeedResult:
    """Simulate one seed and rate it with all three systems."""
    rng = random.Random(seed)
    skills, history = simulate_games(rng, scenario)
    seconds: dict[str, float] = {}
    estimates: dict[str, list[float]] = {}

    def timed(name: str, rate: Callable[[], list[float]]) -> None:
        start = time.perf_counter()
        estimates[name] = rate()
        seconds[name] = time.perf_counter() - start

    deviations: list[float] = []

    def rate_ours() -> list[float]:
        mus, devs = rate_elo(scenario.players, history, params)
        deviations.extend(devs)
        return mus

    timed("elo", rate_ours)
    timed("openskill", lambda: rate_openskill(scenario.players, history))
    timed("trueskill", lambda: rate_trueskill(scenario.players, history))
    tau = {name: kendall_tau(estimates[name], skills) for name in SYSTEMS}
    return SeedResult(
        seed, tau, _band_coverage(estimates["elo"], deviations, skills, params), seconds
    )


def _band_coverage(
    mus: Sequence[float], deviations: Sequence[float], skills: Sequence[float], params: EloParams
) -> float:
    """Share of players whose true skill, on the Elo scale, is within ``mu +/- 2 * deviation``.

    Ratings only know differences, so both sides are centred on their means first.
    """
    elo_per_nat = params.scale / math.log(10.0)
    true_elo = [skill * elo_per_nat for skill in skills]
    mu_mean, true_mean = statistics.fmean(mus), statistics.fmean(true_elo)
    covered = sum(
        abs((mu - mu_mean) - (truth - true_mean)) <= 2.0 * dev
        for mu, dev, truth in zip(mus, deviations, true_elo, strict=True)
    )
    return covered / len(mus)


@dataclass(frozen=True, slots=True)
class Summary:
    """Mean, sample standard deviation, minimum and maximum over the seeds."""

    mean: float
    sd: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(statistics.fmean(values), sd, min(values), max(values))


@dataclass(frozen=True, slots=True)
class ScenarioReport:
    """All seeds of one scenario, and their summaries."""

    scenario: Scenario
    params: EloParams
    seeds: list[SeedResult]
    tau: dict[str, Summary] = field(default_factory=dict)
    elo_minus_trueskill: Summary | None = None
    band_coverage: Summary | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_scenario(
    scenario: Scenario, params: EloParams = DEFAULT_PARAMS, jobs: int = 1
) -> ScenarioReport:
    """Run every seed of ``scenario`` and summarise; ``jobs > 1`` runs seeds in processes.

    Each seed has its own random generator, so the results do not depend on ``jobs``.
    """
    start = time.perf_counter()
    seed_numbers = range(scenario.first_seed, scenario.first_seed + scenario.seeds)
    jobs = max(1, min(jobs, scenario.seeds))
    if jobs == 1:
        seeds = [run_seed(scenario, seed, params) for seed in seed_numbers]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            seeds = list(
                pool.map(
                    run_seed,
                    [scenario] * len(seed_numbers),
                    seed_numbers,
                    [params] * len(seed_numbers),
                )
            )
    return ScenarioReport(
        scenario=scenario,
        params=params,
        seeds=seeds,
        tau={name: Summary.of([s.tau[name] for s in seeds]) for name in SYSTEMS},
        elo_minus_trueskill=Summary.of([s.tau["elo"] - s.tau["trueskill"] for s in seeds]),
        band_coverage=Summary.of([s.band_coverage for s in seeds]),
        seconds=time.perf_counter() - start,
    )


def format_report(report: ScenarioReport) -> str:
    """A plain-text table of one scenario."""
    sc = report.scenario
    lines = [
        f"{sc.players} players, {sc.games} games of {sc.seats_label} seats, "
        f"skill sd {sc.skill_sd:g}, seeds {sc.first_seed}-{sc.first_seed + sc.seeds - 1} "
        f"({report.seconds:.1f} s)",
        f"{'Kendall tau vs true skill':<28}{'mean':>7}{'sd':>7}{'min':>7}{'max':>7}",
    ]

    def row(label: str, s: Summary) -> str:
        return f"{label:<28}{s.mean:>7.3f}{s.sd:>7.3f}{s.min:>7.3f}{s.max:>7.3f}"

    for name in SYSTEMS:
        lines.append(row(SYSTEM_LABELS[name], report.tau[name]))
    if report.elo_minus_trueskill is not None:
        lines.append(row("our Elo - TrueSkill (paired)", report.elo_minus_trueskill))
    if report.band_coverage is not None:
        lines.append(row("our +/-2 dev band coverage", report.band_coverage))
    p = report.params
    lines.append(
        f"our Elo: K = max({p.k_min:g}, {p.k0:g} / (1 + games / {p.k_games:g})), "
        f"deviation = {p.sigma0:g} * sqrt(K / {p.k0:g})"
    )
    return "\n".join(lines)


def _seats(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    try:
        seats = (int(low), int(high or low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"seats must look like 4 or 2-6, got {text!r}") from None
    if not MIN_SEATS <= seats[0] <= seats[1] <= MAX_SEATS:
        raise argparse.ArgumentTypeError(
            f"seats must be within {MIN_SEATS}-{MAX_SEATS}, got {text!r}"
        )
    return seats


def _parser() -> argparse.ArgumentParser:
    defaults = Scenario()
    parser = argparse.ArgumentParser(
        prog="python -m bench.simulate",
        description="Kendall tau of our Elo, OpenSkill PL and TrueSkill against hidden skills.",
    )
    parser.add_argument("--players", type=int, default=defaults.players)
    parser.add_argument("--games", type=int, default=defaults.games)
    parser.add_argument(
        "--seats",
        type=_seats,
        nargs="+",
        default=[(defaults.min_seats, defaults.max_seats)],
        metavar="N|LOW-HIGH",
        help="seats per game: a number, or a range drawn uniformly per game; several values run "
        "several scenarios (e.g. --seats 4 2-6)",
    )
    parser.add_argument("--seeds", type=int, default=defaults.seeds)
    parser.add_argument("--first-seed", type=int, default=defaults.first_seed)
    parser.add_argument(
        "--skill-sd",
        type=float,
        default=defaults.skill_sd,
        help="spread of true skills, natural-log strength (1 = about 174 Elo points)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="seeds run in parallel processes (default: one per CPU); results do not change",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    tuning = parser.add_argument_group("our Elo's constants (defaults: EloParams)")
    for name in ("k0", "k_min", "k_games", "sigma0"):
        tuning.add_argument(
            "--" + name.replace("_", "-"), type=float, default=getattr(DEFAULT_PARAMS, name)
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; prints one table (or one JSON document) for all scenarios."""
    args = _parser().parse_args(argv)
    params = replace(
        DEFAULT_PARAMS, k0=args.k0, k_min=args.k_min, k_games=args.k_games, sigma0=args.sigma0
    )
    reports = []
    for low, high in args.seats:
        scenario = Scenario(
            players=args.players,
            games=args.games,
            min_seats=low,
            max_seats=high,
            seeds=args.seeds,
            first_seed=args.first_seed,
            skill_sd=args.skill_sd,
        )
        reports.append(run_scenario(scenario, params, jobs=args.jobs))
    if args.json:
        print(json.dumps([r.to_json() for r in reports], indent=2))
    else:
        print("\n\n".join(format_report(r) for r in reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
