"""The computation graph drawn with graphviz (gradlab.workbench.graphs)."""
from __future__ import annotations

import shutil

import pytest

import gradlab
from tests.workbench.functions import rnn, loss, W3, XS, H0, W, X


def test_graph_draws_loops_once():
    g = gradlab.graph(gradlab.grad(rnn), W3, XS, H0, highlight="h")
    source = g.dot().source
    assert source.count("cluster_loop") == 1
    assert "next iteration" in source and source.count("next iteration") == 1   # h only
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="apt-get install graphviz"):
            g.svg()
    else:
        assert g.svg().lstrip().startswith("<?xml")


def test_graph_without_dot_says_how_to_install(monkeypatch):
    import gradlab.workbench.graphs as graph_module
    monkeypatch.setattr(graph_module.shutil, "which", lambda name: None)
    g = gradlab.graph(loss)
    bundle = g._repr_mimebundle_()
    assert "apt-get install graphviz" in bundle["text/plain"]


def test_the_graph_reads_top_to_bottom_shows_constants_and_hides_gradients_when_asked():
    g = gradlab.graph(gradlab.grad(loss), W, X, id_prefix="p-")
    source = g.dot().source
    assert "rankdir=TB" in source and '"** 2"' in source
    assert 'id="p-v_xW"' in source and "grad |·|=" in source
    hidden = gradlab.graph(gradlab.grad(loss), W, X, show_gradients=False)
    assert "grad " not in hidden.dot().source and "|·|=" in hidden.dot().source
    if shutil.which("dot") is not None:
        markup = g.html()
        assert "<svg" in markup and "<?xml" not in markup
        assert 'style="max-width:100%;height:auto;' in markup
    from gradlab.workbench.graphs import highlight_css
    assert "#p-v_xW ellipse" in highlight_css("p-", "xW")


def model_loss(model, x):
    pred = model(x)
    return (pred ** 2).sum()


def test_an_opaque_call_is_one_node_fed_by_its_model():
    """A call gradlab cannot read (codegen/opaque.py) is one node labelled with the call, with
    an edge from the model; the framework's backward it keeps is not drawn."""
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2).double()
    df = gradlab.grad(model_loss, ("model", "x"))
    dot = str(gradlab.graph(df, model, torch.ones(4, 3, dtype=torch.float64)).dot())
    assert 'label="model()"' in dot and "v_model -> op_1" in dot and "v_x -> op_1" in dot
    assert "pred_vjp" not in dot
