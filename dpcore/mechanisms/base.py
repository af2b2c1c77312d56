"""The ``Mechanism`` protocol every released statistic kind implements, and the registry of mechanisms.

A mechanism is a frozen object built from **public parameters only** (epsilon, bounds, bins, rows per person ...):
two mechanisms with the same public parameters compare equal, so the app, the planner and the command line can
be checked to use the same one. It states

* ``kind`` -- its name in the registry (:data:`REGISTRY`);
* ``privacy_cost()`` -- the :class:`dpcore.budget.PrivacyCost` a release charges;
* ``draw(*confidential_inputs, rng=None)`` -- one release: ``rng`` None (or :class:`dpcore.rng.SecureRandom`)
  draws the real noise (OpenDP's samplers or the certified sampler of :mod:`dpcore.noise.secure`), snaps it to
  the public output grid and clamps it to the statistic's public range; a numpy Generator or an int seed draws
  a **simulation** of the same law with numpy (reproducible, never a release). The draw's ``measurement`` and
  ``privacy_map`` name the sampler (public text) and ``simulated`` says which of the two it was;
* ``certified_epsilon(draw)`` -- the epsilon that OpenDP's privacy map (or the certificate of the certified
  sampler) gives for that draw at the mechanism's sensitivity: never above the charged cost;
* ``interval_kind`` -- the kind of :func:`dpcore.published.published_table` whose intervals its released values
  carry (None when it publishes none);
* ``record()`` -- the one public text every release record of the kind carries (what the release card needs).

Only registered mechanisms make real releases (:func:`check_registered`): a release path builds the kind's
mechanism and calls its ``draw``, never a sampler, and an object that merely looks like a mechanism (a
``release()`` or ``draw()`` method of its own) is refused. ``tests/test_mechanism_conformance.py`` runs the same
checks over every registered mechanism, as scikit-learn's ``check_estimator`` does over estimators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from ..noise.secure import NoiseDraw

__all__ = ["Mechanism", "MechanismDraw", "DrawProvenance", "REGISTRY", "register", "check_registered", "Drawer"]


@runtime_checkable
class MechanismDraw(Protocol):
    """What every draw of a mechanism says about how it was made (public text)."""

    measurement: str
    privacy_map: str
    simulated: bool


_Draw = TypeVar("_Draw", bound="DrawProvenance")


@dataclass(frozen=True, kw_only=True)
class DrawProvenance:
    """The fields a draw of a single sampler carries after its values: ``measurement`` and ``privacy_map`` (public
    text naming the sampler and its statement), ``map_epsilon`` (the epsilon that privacy map gives, None when
    nothing was drawn) and ``simulated``. Keyword-only, so a draw class lists its values first and builds with
    :meth:`from_noise` or :meth:`without_cells`, and the four fields are written once for every kind."""

    measurement: str
    privacy_map: str
    map_epsilon: float | None
    simulated: bool

    @classmethod
    def from_noise(cls: type[_Draw], noise: NoiseDraw, **values: Any) -> _Draw:
        """The draw of ``values`` whose noise ``noise`` drew (its measurement, privacy map and the epsilon of that
        map)."""
        return cls(
            **values,
            measurement=noise.measurement,
            privacy_map=noise.privacy_map,
            map_epsilon=noise.epsilon,
            simulated=noise.simulated,
        )

    @classmethod
    def without_cells(cls: type[_Draw], rng: Any, **values: Any) -> _Draw:
        """The draw of a table without cells: nothing depends on the data, so no noise is drawn (real or
        simulated as ``rng`` says)."""
        from ..noise import secure as secure_noise

        return cls(
            **values,
            measurement="none: no cells",
            privacy_map="no data-dependent output",
            map_epsilon=None,
            simulated=secure_noise.is_simulation(rng),
        )


@runtime_checkable
class Mechanism(Protocol):
    """One released statistic kind's mechanism (module docstring)."""

    kind: str
    epsilon: float
    interval_kind: str | None

    def privacy_cost(self) -> Any:
        """The :class:`dpcore.budget.PrivacyCost` of one release (public inputs only)."""
        ...

    def record(self) -> dict[str, Any]:
        """The public description every release record of this kind carries."""
        ...

    def draw(self, *confidential: Any, rng: Any = None) -> Any:
        """One release (``rng`` None: the real sampler) or one simulation of its law (``rng`` a seed)."""
        ...

    def certified_epsilon(self, draw: Any) -> float:
        """The epsilon OpenDP's privacy map (or the sampler's certificate) gives for ``draw``."""
        ...


#: kind -> the class of its mechanism, filled by :func:`register` as the mechanism modules are imported
REGISTRY: dict[str, type] = {}


def register(cls: type) -> type:
    """Class decorator: enter a mechanism class in :data:`REGISTRY` under its ``kind`` (one class per kind)."""
    if not isinstance(cls, type):
        raise TypeError(f"register decorates a mechanism class, got {type(cls).__name__}")
    kind = getattr(cls, "kind", None)
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"{cls.__name__} needs a class attribute kind (its name in the registry)")
    if REGISTRY.get(kind, cls) is not cls:
        raise TypeError(f"two mechanisms for the kind {kind!r}: {REGISTRY[kind].__name__} and {cls.__name__}")
    REGISTRY[kind] = cls
    return cls


def check_registered(mechanism: Any, what: str = "a release") -> Any:
    """``mechanism`` when it is an instance of a registered mechanism class (exactly: a subclass could change its
    draw), else a TypeError naming what was given. Duck typing is refused on purpose: a real release is made only
    by the mechanisms whose draws, costs and records the conformance test checks."""
    if type(mechanism) not in REGISTRY.values():
        raise TypeError(
            f"{what} draws only through a registered mechanism of dpcore.mechanisms ({', '.join(sorted(REGISTRY))}); "
            f"got {type(mechanism).__name__}: nothing was charged"
        )
    return mechanism


class Drawer:
    """The draws of one release, through its mechanisms only.

    Built from the mechanisms a release declared (and charged for), each checked to be registered, and from the
    source of its noise: ``rng`` None (or :class:`dpcore.rng.SecureRandom`) for a real release, a numpy
    Generator or seed for a simulation (:attr:`real`). ``drawer(mechanism, *inputs)`` is ``mechanism.draw(*inputs,
    rng=rng)`` for a mechanism equal to a declared one, and refuses any other: a release cannot draw what it did
    not declare, and the declared mechanisms are what :func:`dpcore.pipeline.release` composes and checks against
    the charge. :attr:`used` lists the mechanisms that drew (the release record's and the tests' evidence)."""

    def __init__(self, mechanisms: Any, rng: Any = None) -> None:
        from ..noise import secure as secure_noise

        self.mechanisms: tuple[Any, ...] = tuple(check_registered(m, "a release") for m in mechanisms)
        self.rng = rng
        self.real = not secure_noise.is_simulation(rng)
        self.used: list[Any] = []

    def __call__(self, mechanism: Any, *inputs: Any, **kwargs: Any) -> Any:
        check_registered(mechanism, "a release")
        if mechanism not in self.mechanisms:
            raise TypeError(
                f"the release drew through a {type(mechanism).__name__} it did not declare: a release draws only "
                "through the mechanisms it is charged for"
            )
        self.used.append(mechanism)
        return mechanism.draw(*inputs, rng=self.rng, **kwargs)
