"""Every Keras model through one harness (`keras_harness.py`, as keras-hub's
`run_task_test` / `run_model_saving_test`): config round trip, predict
shapes, a `fit` step on raw text, the `.keras` file in a fresh process, the
SavedModel export and the TF1 names. A new model is a `ModelSpec` there."""

import keras
import keras_harness
import pytest
from keras_harness import SPECS, Harness


def specs_with(field):
    """The specs whose `field` is set, as parameters named after the model."""
    chosen = [spec for spec in SPECS if getattr(spec, field) is not None]
    return pytest.mark.parametrize("spec", chosen, ids=[spec.name for spec in chosen])


ALL = pytest.mark.parametrize("spec", SPECS, ids=[spec.name for spec in SPECS])


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return Harness(str(tmp_path_factory.mktemp("keras_harness")))


def test_every_keras_model_of_bert_tf_has_a_spec():
    """The models a `.keras` file may hold (registered Keras models): all eight."""
    registered = {
        cls.__name__
        for name, cls in keras.saving.get_custom_objects().items()
        if name.startswith("bert_tf>") and issubclass(cls, keras.Model)
    }
    assert registered == {spec.name for spec in SPECS}
    assert len(SPECS) == 8


@pytest.mark.numerics
@ALL
def test_config_round_trip_gives_the_same_model(harness, spec):
    keras_harness.check_config_round_trip(harness, spec)


@ALL
def test_predict_shapes(harness, spec):
    keras_harness.check_predict_shapes(harness, spec)


@specs_with("fit")
def test_one_fit_step_moves_every_trainable_weight(harness, spec):
    keras_harness.check_fit_step(harness, spec)


@pytest.mark.numerics
@ALL
def test_keras_file_loads_in_a_fresh_process_with_the_same_predictions(harness, spec):
    keras_harness.check_keras_file(harness, spec)


@pytest.mark.numerics
@specs_with("export")
def test_saved_model_serves_the_models_outputs(harness, spec):
    keras_harness.check_export(harness, spec)


@ALL
def test_tf1_names_are_the_original_berts(harness, spec):
    keras_harness.check_tf1_names(harness, spec)
