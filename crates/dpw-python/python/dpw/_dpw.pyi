"""Type stubs of the native module dpw._dpw (re-exported by the dpw package)."""

from typing import Iterable, List, Optional, Sequence, Tuple, Union, overload

try:
    from numpy.typing import ArrayLike, NDArray
    import numpy as _np

    _Array = NDArray[_np.float64]
except ImportError:  # pragma: no cover
    ArrayLike = object  # type: ignore[misc,assignment]
    _Array = object  # type: ignore[misc,assignment]

_Number = Union[float, int]
_MechanismLike = Union["Mechanism", "Composition", str]

@overload
def analytic_sigma(epsilon: _Number, delta: _Number, sensitivity: _Number = 1.0) -> float: ...
@overload
def analytic_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> _Array: ...
@overload
def classical_sigma(epsilon: _Number, delta: _Number, sensitivity: _Number = 1.0) -> float: ...
@overload
def classical_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> _Array: ...
@overload
def gaussian_delta(epsilon: _Number, mu: _Number) -> float: ...
@overload
def gaussian_delta(epsilon: ArrayLike, mu: ArrayLike) -> _Array: ...
@overload
def gaussian_epsilon(delta: _Number, mu: _Number) -> float: ...
@overload
def gaussian_epsilon(delta: ArrayLike, mu: ArrayLike) -> _Array: ...

class Bracket:
    """A certified bracket lower <= exact <= upper of epsilon(delta) or delta(epsilon)."""

    @property
    def quantity(self) -> str:
        """'epsilon' (answering a delta), 'delta' (answering an epsilon) or 'tpr' (at_fpr)."""
    @property
    def given(self) -> float:
        """The delta or epsilon that was given."""
    @property
    def lower(self) -> float:
        """Certified lower bound."""
    @property
    def estimate(self) -> float:
        """Midpoint of the bracket (geometric for delta)."""
    @property
    def upper(self) -> float:
        """Certified upper bound: the value to report as a guarantee."""
    @property
    def ln_lower(self) -> float:
        """ln(lower); keeps its digits where delta underflows a double."""
    @property
    def ln_upper(self) -> float:
        """ln(upper)."""
    @property
    def step(self) -> float:
        """Grid step of the final discretisation."""
    @property
    def accuracy_met(self) -> bool:
        """Whether the requested relative accuracy was reached."""
    @property
    def seconds(self) -> float:
        """Wall-clock seconds of the computation."""

class Mechanism:
    """A mechanism and its count, in the SPEC language of ``dpw account``."""

    def __init__(self, spec: str) -> None: ...
    @staticmethod
    def gaussian(sigma: float, *, sensitivity: float = 1.0) -> Mechanism: ...
    @staticmethod
    def laplace(scale: float, *, sensitivity: float = 1.0) -> Mechanism: ...
    @staticmethod
    def discrete_laplace(scale: float, *, sensitivity: int = 1) -> Mechanism: ...
    @staticmethod
    def discrete_gaussian(sigma: float, *, sensitivity: int = 1) -> Mechanism: ...
    @staticmethod
    def randomized_response(epsilon: float, *, sensitivity: float = 1.0) -> Mechanism: ...
    @staticmethod
    def truncated_laplace(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> Mechanism: ...
    @staticmethod
    def approx_dp(epsilon: float, delta: float) -> Mechanism: ...
    @staticmethod
    def exponential(epsilon: float) -> Mechanism: ...
    @staticmethod
    def gaussian_mixture(
        sigma: float, shifts: Sequence[float], probs: Sequence[float], *, sensitivity: float = 1.0
    ) -> Mechanism: ...
    @staticmethod
    def permute_and_flip(epsilon: float) -> Mechanism: ...
    @staticmethod
    def report_noisy_max(epsilon: float, noise: str) -> Mechanism: ...
    @staticmethod
    def bounded(
        radius: float, *, family: str = "power", alpha: Optional[float] = None, sensitivity: float = 1.0
    ) -> Mechanism: ...
    @staticmethod
    def subsampled_gaussian(sigma: float, q: float, *, sensitivity: float = 1.0) -> Mechanism: ...
    @staticmethod
    def subsampled_laplace(scale: float, q: float, *, sensitivity: float = 1.0) -> Mechanism: ...
    def compose(self, count: int) -> Mechanism: ...
    def epsilon(self, delta: float, *, accuracy: Optional[float] = None) -> Bracket: ...
    def delta(self, epsilon: float, *, accuracy: Optional[float] = None) -> Bracket: ...
    def solve(
        self,
        unknown: str,
        *,
        epsilon: Optional[float] = None,
        delta: Optional[float] = None,
        max_tpr: Optional[float] = None,
        at_fpr: Optional[float] = None,
        accuracy: Optional[float] = None,
        max_work: Optional[float] = None,
    ) -> Solution: ...
    @property
    def spec(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def sensitivity(self) -> float: ...
    def __add__(self, other: _MechanismLike) -> Composition: ...

class Composition:
    """A heterogeneous composition: ``a + b`` or ``compose([a, b, ...])``."""

    def compose(self, count: int) -> Composition: ...
    def epsilon(self, delta: float, *, accuracy: Optional[float] = None) -> Bracket: ...
    def delta(self, epsilon: float, *, accuracy: Optional[float] = None) -> Bracket: ...
    def solve(
        self,
        unknown: str,
        *,
        index: Optional[int] = None,
        epsilon: Optional[float] = None,
        delta: Optional[float] = None,
        max_tpr: Optional[float] = None,
        at_fpr: Optional[float] = None,
        accuracy: Optional[float] = None,
        max_work: Optional[float] = None,
    ) -> Solution: ...
    @property
    def mechanisms(self) -> List[Mechanism]: ...
    @property
    def specs(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __add__(self, other: _MechanismLike) -> Composition: ...
    def __radd__(self, other: _MechanismLike) -> Composition: ...

def compose(mechanisms: Iterable[_MechanismLike]) -> Composition: ...
def event_specs(tree: str, neighbours: str) -> List[str]: ...
def account(
    mechanisms: Sequence[_MechanismLike],
    *,
    delta: Optional[float] = None,
    epsilon: Optional[float] = None,
    at_fpr: Optional[float] = None,
    accuracy: Optional[float] = None,
    max_work: Optional[float] = None,
    schedule: Optional[str] = None,
) -> Bracket: ...

class Solution:
    """A certified solution of ``solve``: ``meets`` meets every target, ``fails`` fails one."""

    @property
    def parameter(self) -> str:
        """The key of the unknown ('sigma', 'count', ...)."""
    @property
    def meets(self) -> Union[float, int]:
        """Certified to meet every target: the value to use (an int for count)."""
    @property
    def fails(self) -> Optional[Union[float, int]]:
        """Certified to fail a target; None when every value in range meets them."""
    @property
    def evaluations(self) -> int:
        """Accountant evaluations made by the search."""
    @property
    def accuracy_met(self) -> bool:
        """Whether |meets/fails - 1| <= accuracy (count: fails == meets + 1)."""
    @property
    def mechanisms(self) -> List[str]:
        """The SPECs solved, with the ``?``."""
    @property
    def specs(self) -> List[str]:
        """The SPECs with the unknown set to ``meets``."""
    @property
    def target(self) -> str:
        """The targets in one line."""
    @property
    def seconds(self) -> float:
        """Wall-clock seconds of the search."""
    @property
    def work(self) -> int:
        """Work done, in bins transformed."""

def solve(
    mechanisms: Union[str, Sequence[_MechanismLike]],
    *,
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    max_tpr: Optional[float] = None,
    at_fpr: Optional[float] = None,
    accuracy: Optional[float] = None,
    max_work: Optional[float] = None,
) -> Solution: ...

class RadiusBracket:
    """A certified bracket on the least radius of bounded noise."""

    @property
    def lower(self) -> float:
        """Certified insufficient."""
    @property
    def upper(self) -> float:
        """Certified sufficient: the radius to use."""
    @property
    def certified(self) -> float:
        """The certified Chernoff radius the search started from."""
    @property
    def evaluations(self) -> int: ...

def certified_radius(
    k: float, epsilon: float, delta: float, family: str = "power", alpha: Optional[float] = None
) -> float: ...
def least_radius(
    k: int,
    epsilon: float,
    delta: float,
    family: str = "power",
    alpha: Optional[float] = None,
    accuracy: Optional[float] = None,
) -> RadiusBracket: ...
def calibrate_rows(
    epsilon: float,
    delta: float,
    queries: float,
    sensitivity: float,
    beta: float,
    density: str,
    exact: bool = True,
) -> List[
    Tuple[str, str, Optional[float], Optional[float], Optional[float], Optional[float], Optional[bool], str]
]: ...
