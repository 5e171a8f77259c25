"""One self-contained HTML page per result: what each head does, and the no-op test (``probing explore``).

The page holds everything inline (CSS, script, data; no request leaves it):

- per relation and direction, the layer x head heatmap of the probe's
  accuracy, the chosen head outlined; a click on a cell (or Enter/Space on it,
  arrow keys move between cells) shows that head's *sentence views* and its
  no-op shares, and puts the head in the address (``PAGE.html#head=det:dep_to_head:3-9``,
  layer-head from 1), so that a link opens the page on that head;
- a sentence view (Clark et al. 2019, Figure 5) puts the words in a row and
  draws, above them, an arc from each word to the word it attends to most
  (``dep->head``; for a ``head->dep`` heatmap, from the word that attends to
  it most), thicker and darker for more attention: green when the word is a
  dependent of the relation and the arc finds its gold head, red when it
  misses, grey for other words; below each word a bar gives its share of
  attention to special tokens, and below that the relation's gold arcs are
  dashed;
- the no-op table (each relation's chosen head: the share of attention to
  special tokens and punctuation from dependents vs other words, with
  intervals) and its per-layer means;
- the probe's leaderboard table (sortable by any column), the surface
  statistics' layer table when given, and the tables of any other results.

No torch here: the page is made from result dicts, the views' plain lists and
the treebank's sentences.

>>> heatmap_colour(0.0), heatmap_colour(1.0)
('#440154', '#fde725')
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

from probing.analyses.noop.report import CHOSEN_HEADERS, GROUPS, LAYER_HEADERS, TARGETS, chosen_heads, chosen_table_rows, layer_table_rows
from probing.report.board import HTML_STYLE, SORT_SCRIPT, build_leaderboard, html_table, model_label
from probing.naming import DIRECTIONS, WORDS, head_name
from probing.data.relations import relation_pairs
from probing.data.treebank import Sentence

DECIMALS = 4


def heatmap_colour(value: float | None) -> str:
    """The viridis colour of an accuracy in [0, 1] as #rrggbb (grey for no value)."""
    if value is None:
        return "#d9d9d9"
    from matplotlib import colormaps

    red, green, blue, _ = colormaps["viridis"](min(max(value, 0.0), 1.0))
    return f"#{round(255 * red):02x}{round(255 * green):02x}{round(255 * blue):02x}"


def _text_colour(value: float | None) -> str:
    return "#000" if value is not None and value > 0.55 else "#fff"


def sentence_block(sentence: Sentence, index: int, relations: Sequence[str]) -> dict:
    """What a view needs of a treebank sentence: words, gold heads and labels, and each relation's pairs.

    >>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
    ...              upos=("DET", "NOUN", "VERB"))
    >>> sentence_block(s, 4, ["det"])["pairs"]
    {'det': [[0, 1]]}
    """
    return {
        "index": index,
        "words": list(sentence.words),
        "heads": list(sentence.heads),
        "labels": list(sentence.labels),
        "pairs": {name: [list(pair) for pair in relation_pairs(name, sentence)] for name in relations},
    }


def page_data(probe: dict, noop: dict | None, views: dict | None, sentences: Sequence[dict]) -> dict:
    """The data the page's script reads: accuracies, chosen heads, no-op shares, sentences and views."""
    relations = list(probe["relations"])
    accuracy = {}
    for name, entry in probe["relations"].items():
        total = entry["total"]
        accuracy[name] = {direction: [[round(count / total, DECIMALS) if total else None for count in row]
                                      for row in entry["heads"][direction]] for direction in DIRECTIONS}
    shares = {}
    if noop is not None:
        for name, entry in noop["noop"]["relations"].items():
            shares[name] = {group: entry["heads"][group] for group in GROUPS}
    return {
        "model": model_label(probe["model"], probe["config"].get("attention", "weights")),
        "layers": probe["model"]["num_layers"],
        "heads": len(next(iter(probe["relations"].values()))["heads"]["dep_to_head"][0]),
        "relations": relations,
        "directions": {direction: WORDS[direction] for direction in DIRECTIONS},
        "accuracy": accuracy,
        "chosen": chosen_heads(probe),
        "noop": shares,
        "sentences": list(sentences),
        "views": None if views is None else views["heads"],
    }


def _heatmaps(data: dict) -> str:
    """One grid table per relation and direction; cells carry their head and are reachable by keyboard."""
    figures = []
    first = True
    for relation in data["relations"]:
        chosen = data["chosen"].get(relation)
        for direction, words in data["directions"].items():
            grid = data["accuracy"][relation][direction]
            rows = []
            for layer, values in enumerate(grid):
                cells = []
                for head, value in enumerate(values):
                    is_chosen = bool(chosen and chosen["layer"] == layer and chosen["head"] == head
                                     and chosen["direction"] == direction)
                    label = (f"{relation}, {words}, head {head_name(layer, head)}: "
                             + ("no pairs" if value is None else f"{100 * value:.1f}%")
                             + (" (chosen)" if is_chosen else ""))
                    tabindex = "0" if first else "-1"
                    first = False
                    cells.append(
                        f'<td class="cell{" chosen" if is_chosen else ""}" role="gridcell" tabindex="{tabindex}" '
                        f'aria-selected="false" aria-label="{html.escape(label)}" title="{html.escape(label)}" '
                        f'data-relation="{html.escape(relation)}" data-direction="{direction}" data-layer="{layer}" '
                        f'data-head="{head}" style="background:{heatmap_colour(value)}"></td>')
                rows.append(f'<tr><th scope="row">{layer + 1}</th>{"".join(cells)}</tr>')
            heads = "".join(f'<th scope="col">{head + 1}</th>' for head in range(data["heads"]))
            chosen_text = ""
            if chosen and chosen["direction"] == direction:
                chosen_text = f' · chosen {head_name(chosen["layer"], chosen["head"])}'
            figures.append(
                f'<figure class="map"><figcaption><b>{html.escape(relation)}</b> {html.escape(words)}'
                f'{html.escape(chosen_text)}</figcaption>'
                f'<table class="heat" role="grid" aria-label="{html.escape(relation)}, {html.escape(words)}: '
                f'accuracy of every head; arrow keys move, Enter shows the head">'
                f'<thead><tr><th></th>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></figure>')
    scale = "".join(f'<span style="background:{heatmap_colour(step / 10)}"></span>' for step in range(11))
    return (f'<div class="maps">{"".join(figures)}</div>'
            f'<p class="scale" aria-hidden="true">0%<span class="bar">{scale}</span>100% accuracy · layers down, '
            'heads across, from 1 · outlined: the chosen head</p>')


def _plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", css: str = "plain") -> str:
    head = "".join(f'<th scope="col">{html.escape(title)}</th>' for title in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(value)}</td>" for value in row) + "</tr>" for row in rows)
    caption = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table class="{css}">{caption}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _noop_section(noop: dict | None) -> str:
    if noop is None:
        return ""
    block = noop["noop"]
    level = f"{100 * block['level']:g}%"
    intervals = (f"[{level} percentile bootstrap interval over sentences, {block['replicates']} Poisson replicates]"
                 if block["replicates"] else "(no intervals: --bootstrap 0)")
    layers = "".join(
        f"<details><summary>{html.escape(name)}: every layer, mean over heads</summary>"
        + _plain_table(LAYER_HEADERS, layer_table_rows(noop, name)) + "</details>"
        for name in block["relations"])
    return (
        '<section id="noop" aria-labelledby="noop-title"><h2 id="noop-title">The no-op test</h2>'
        "<p>Clark et al. (2019) read attention to [SEP] as a no-op: a head that tracks a relation sends its "
        "dependents to their heads (or, head→dependent, the head words to their dependents) and parks every "
        "other word's attention on special tokens. If so, the <em>others</em> columns are much higher than the "
        "<em>attending</em> columns. Shares in % of a word's "
        f"attention, averaged over words, {html.escape(intervals)}; {block['sentences']} sentences, "
        f"{block['words']} words.</p>"
        + _plain_table(CHOSEN_HEADERS, chosen_table_rows(noop), caption="Each relation's chosen head", css="plain noop")
        + layers + "</section>")


def _leaderboard_section(probe: dict, noop: dict | None, others: Sequence[dict]) -> str:
    results = [probe] + ([noop] if noop is not None else []) + list(others)
    board = build_leaderboard(results)
    return ('<section id="tables" aria-labelledby="tables-title"><h2 id="tables-title">Tables</h2>'
            + "".join(html_table(table, "h3") for table in board.tables) + "</section>")


def _surface_section(surface: dict | None) -> str:
    if surface is None:
        return ""
    from probing.commands.surface import layer_table

    table = layer_table(surface, tablefmt="html").split("\n\n")
    return ('<section id="surface" aria-labelledby="surface-title"><h2 id="surface-title">Where attention goes '
            '(surface statistics)</h2><div class="scroll plain">' + table[0] + "</div><p>"
            + html.escape(table[1] if len(table) > 1 else "") + "</p></section>")


PAGE_STYLE = """
.maps{display:flex;flex-wrap:wrap;gap:0.9rem 1.2rem}
figure.map{margin:0}
figure.map figcaption{font-size:0.85rem;margin-bottom:0.2rem}
table.heat{border-collapse:separate;border-spacing:1px;font-size:0.62rem;color:#555}
table.heat th{font-weight:400;padding:0 0.15rem;text-align:center}
table.heat td.cell{width:14px;height:14px;padding:0;cursor:pointer;outline-offset:0}
table.heat td.cell.chosen{box-shadow:inset 0 0 0 2px #ff2d55}
table.heat td.cell[aria-selected=true]{outline:3px solid #111;outline-offset:0}
table.heat td.cell:focus-visible{outline:3px solid #0a64d8}
.scale{font-size:0.8rem;color:#444;display:flex;align-items:center;gap:0.4rem;flex-wrap:wrap}
.scale .bar{display:inline-flex}.scale .bar span{display:inline-block;width:14px;height:10px}
#detail{border:1px solid #d5d9e0;border-radius:6px;padding:0.6rem 1rem;margin-top:1rem;background:#fbfcfe}
#detail h2{margin-top:0.3rem}
.views{display:flex;flex-direction:column;gap:0.6rem}
.view{overflow-x:auto;max-width:100%;border-top:1px solid #eee;padding-top:0.3rem}
.view p{margin:0;font-size:0.75rem;color:#666}
svg.sentence text.word{font-size:13px;fill:#111}
svg.sentence .share{font-size:9px;fill:#555}
.legend{font-size:0.8rem;color:#444}
.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin:0 0.2rem}
table.plain{border-collapse:collapse;font-size:0.85rem;margin:0.4rem 0}
table.plain th,table.plain td,.plain table th,.plain table td{border-bottom:1px solid #e3e3e6;padding:0.25rem 0.55rem;
text-align:right;white-space:nowrap}
table.plain td:first-child,table.plain th:first-child{text-align:left}
table.plain caption{text-align:left;font-weight:600;padding:0.3rem 0}
details{margin:0.3rem 0}
summary{cursor:pointer}
nav a{margin-right:1rem}
footer{margin-top:2rem;font-size:0.8rem;color:#555}
code{font-size:0.85em;word-break:break-all}
@media (max-width:700px){body{margin:0.8rem auto}h1{font-size:1.2rem}table.heat td.cell{width:12px;height:12px}}
"""

PAGE_SCRIPT = r"""
(function(){
var DATA=JSON.parse(document.getElementById('page-data').textContent);
var NS='http://www.w3.org/2000/svg';
var COLOURS={correct:'#1a7f37',wrong:'#cf222e',other:'#8c959f'};
function pct(x){return x===null||x===undefined?'\u2013':(100*x).toFixed(1);}
function el(name,attrs,text){var e=document.createElementNS(NS,name);for(var k in attrs)e.setAttribute(k,attrs[k]);
 if(text!==undefined)e.textContent=text;return e;}
var ruler=document.createElement('canvas').getContext('2d');ruler.font='13px system-ui, -apple-system, sans-serif';
function drawSentence(sentence,values,relation,direction){
 var n=sentence.words.length,x=[],widths=[],left=8;
 for(var i=0;i<n;i++){var w=Math.max(ruler.measureText(sentence.words[i]).width+14,30);widths.push(w);x.push(left+w/2);left+=w;}
 var gold={};(sentence.pairs[relation]||[]).forEach(function(p){gold[p[0]]=p[1];});
 var byDep=direction==='dep_to_head',arcs=[],span=0;
 for(var i=0;i<n;i++){var t=byDep?values[0][i]:values[2][i],w=byDep?values[1][i]:values[3][i];
  var kind=(i in gold)?(gold[i]===t?'correct':'wrong'):'other';
  arcs.push({from:byDep?i:t,to:byDep?t:i,word:i,weight:w,kind:kind});span=Math.max(span,Math.abs(x[t]-x[i]));}
 var goldSpan=0;Object.keys(gold).forEach(function(q){if(gold[q]>=0)goldSpan=Math.max(goldSpan,Math.abs(x[gold[q]]-x[+q]));});
 function lift(d){return Math.min(14+0.32*d,130);}
 var top=lift(span)+6,wordY=top+14,barY=wordY+6,goldY=barY+18,height=goldY+(goldSpan?lift(goldSpan)*0.6:0)+8;
 var svg=el('svg',{'class':'sentence',width:left+8,height:height,viewBox:'0 0 '+(left+8)+' '+height,role:'img',
  'data-relation':relation,'data-direction':direction,'data-sentence':sentence.index});
 svg.appendChild(el('title',{},sentence.words.join(' ')));
 var defs=el('defs');['correct','wrong','other','gold'].forEach(function(k){
  var m=el('marker',{id:'arrow-'+k,viewBox:'0 0 6 6',refX:5,refY:3,markerWidth:7,markerHeight:7,markerUnits:'userSpaceOnUse',orient:'auto-start-reverse'});
  m.appendChild(el('path',{d:'M0,0 L6,3 L0,6 z',fill:k==='gold'?'#333':COLOURS[k]}));defs.appendChild(m);});
 svg.appendChild(defs);
 arcs.sort(function(a,b){return (a.kind==='other')-(b.kind==='other')||0;}).reverse();
 arcs.forEach(function(a){var x1=x[a.from],x2=x[a.to],h=lift(Math.abs(x2-x1)),y=top,
  path=el('path',{'class':'arc '+a.kind,d:'M'+x1+','+y+' C'+x1+','+(y-h)+' '+x2+','+(y-h)+' '+x2+','+y,
   fill:'none',stroke:COLOURS[a.kind],'stroke-width':(0.6+3.4*a.weight).toFixed(2),'stroke-opacity':(0.3+0.7*a.weight).toFixed(2),
   'marker-end':'url(#arrow-'+a.kind+')','data-from':a.from,'data-to':a.to,'data-word':a.word,'data-weight':a.weight});
  path.appendChild(el('title',{},sentence.words[a.from]+' \u2192 '+sentence.words[a.to]+': '+pct(a.weight)+'% of its attention'));
  svg.appendChild(path);});
 for(var i=0;i<n;i++){var share=values[4][i],bw=widths[i]-10;
  var t=el('text',{'class':'word',x:x[i],y:wordY,'text-anchor':'middle','data-index':i},sentence.words[i]);
  t.appendChild(el('title',{},sentence.words[i]+': '+pct(share)+'% to special tokens, '+pct(values[5][i])+'% to punctuation'));
  svg.appendChild(t);
  svg.appendChild(el('rect',{x:x[i]-bw/2,y:barY,width:bw,height:5,fill:'#e6e6ee'}));
  svg.appendChild(el('rect',{'class':'special',x:x[i]-bw/2,y:barY,width:(bw*Math.min(share,1)).toFixed(1),height:5,fill:'#6e40c9','data-share':share}));
  if(share>=0.05)svg.appendChild(el('text',{'class':'share',x:x[i],y:barY+14,'text-anchor':'middle'},Math.round(100*share)+'%'));}
 Object.keys(gold).forEach(function(q){q=+q;var h=gold[q];if(h<0)return;var x1=x[q],x2=x[h],d=lift(Math.abs(x2-x1))*0.6;
  svg.appendChild(el('path',{'class':'gold',d:'M'+x1+','+goldY+' C'+x1+','+(goldY+d)+' '+x2+','+(goldY+d)+' '+x2+','+goldY,
   fill:'none',stroke:'#333','stroke-width':1.1,'stroke-dasharray':'4 3','marker-end':'url(#arrow-gold)','data-from':q,'data-to':h}));});
 return svg;}
function noopTable(layer,head,direction){
 var groups=direction==='dep_to_head'?['dependents','non_dependents']:['heads','non_heads'];
 var rows=DATA.relations.filter(function(r){return DATA.noop[r];}).map(function(r){var s=DATA.noop[r];
  function v(g,t){return s[g][t]?pct(s[g][t][layer][head]):'\u2013';}
  return '<tr><td>'+r+'</td><td>'+v(groups[0],'special')+'</td><td>'+v(groups[1],'special')+'</td><td>'+v(groups[0],'punctuation')+'</td><td>'+v(groups[1],'punctuation')+'</td></tr>';});
 if(!rows.length)return '';
 var a=groups[0];
 return '<div class="scroll"><table class="plain"><caption>No-op shares of this head (% of a word\u2019s attention; '+a+': the words this direction reads)</caption><thead><tr><th scope="col">relation</th><th scope="col">'+a+' \u2192 special</th><th scope="col">others \u2192 special</th><th scope="col">'+a+' \u2192 punct.</th><th scope="col">others \u2192 punct.</th></tr></thead><tbody>'+rows.join('')+'</tbody></table></div>';}
function show(cell){
 var relation=cell.getAttribute('data-relation'),direction=cell.getAttribute('data-direction');
 var layer=+cell.getAttribute('data-layer'),head=+cell.getAttribute('data-head'),name=(layer+1)+'-'+(head+1);
 document.querySelectorAll('td.cell[aria-selected=true]').forEach(function(c){c.setAttribute('aria-selected','false');});
 cell.setAttribute('aria-selected','true');
 var detail=document.getElementById('detail');detail.setAttribute('data-head',name);
 detail.setAttribute('data-relation',relation);detail.setAttribute('data-direction',direction);
 try{history.replaceState(null,'','#head='+encodeURIComponent(relation)+':'+direction+':'+name);}catch(e){}
 document.getElementById('detail-title').textContent='Head '+name+' \u00b7 '+relation+' \u00b7 '+DATA.directions[direction];
 var acc=DATA.accuracy[relation][direction][layer][head];
 document.getElementById('detail-accuracy').textContent=relation+' accuracy of this head, '+DATA.directions[direction]+': '+pct(acc)+'%.';
 document.getElementById('detail-noop').innerHTML=noopTable(layer,head,direction);
 var box=document.getElementById('detail-views');box.textContent='';
 if(!DATA.views){box.textContent='No sentence views in this page.';return;}
 var values=DATA.views[layer+'-'+head];
 DATA.sentences.forEach(function(sentence,s){var wrap=document.createElement('div');wrap.className='view';
  var found=(sentence.pairs[relation]||[]).length;
  var p=document.createElement('p');p.textContent='Sentence '+(sentence.index+1)+' of the input'+(found?' \u00b7 '+found+' '+relation+' pair'+(found>1?'s':''):' \u00b7 no '+relation+' pair');
  wrap.appendChild(p);wrap.appendChild(drawSentence(sentence,values[s],relation,direction));box.appendChild(wrap);});}
var cells=Array.prototype.slice.call(document.querySelectorAll('td.cell'));
cells.forEach(function(cell){cell.addEventListener('click',function(){focusCell(cell);show(cell);});
 cell.addEventListener('keydown',function(e){
  if(e.key==='Enter'||e.key===' '){e.preventDefault();show(cell);document.getElementById('detail').scrollIntoView({block:'nearest'});return;}
  var grid=cell.closest('table'),r=cell.parentNode.rowIndex,c=cell.cellIndex,rows=grid.rows,next=null;
  if(e.key==='ArrowRight')next=rows[r].cells[c+1];else if(e.key==='ArrowLeft')next=c>1?rows[r].cells[c-1]:null;
  else if(e.key==='ArrowDown')next=rows[r+1]?rows[r+1].cells[c]:null;else if(e.key==='ArrowUp')next=r>1?rows[r-1].cells[c]:null;
  if(next&&next.classList.contains('cell')){e.preventDefault();focusCell(next);next.focus();}});});
function focusCell(cell){cells.forEach(function(c){c.setAttribute('tabindex','-1');});cell.setAttribute('tabindex','0');}
function fromHash(){var m=/^#head=([^:]+):(dep_to_head|head_to_dep):(\d+)-(\d+)$/.exec(decodeURIComponent(location.hash));
 if(!m)return null;return document.querySelector('td.cell[data-relation="'+CSS.escape(m[1])+'"][data-direction="'+m[2]+'"][data-layer="'+(m[3]-1)+'"][data-head="'+(m[4]-1)+'"]');}
var start=fromHash()||document.querySelector('td.cell.chosen')||cells[0];if(start){focusCell(start);show(start);}
window.addEventListener('hashchange',function(){var c=fromHash();if(c){focusCell(c);show(c);}});
})();
"""


def render_page(probe: dict, *, noop: dict | None = None, views: dict | None = None,
                sentences: Sequence[dict] = (), surface: dict | None = None, others: Sequence[dict] = (),
                command: str = "") -> str:
    """The whole page as one HTML string (see the module docstring)."""
    data = page_data(probe, noop, views, sentences)
    model = probe["model"]
    treebank = probe["treebank"]
    title = f"What the heads of {data['model']} do"
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    facts = (f"{model['architecture']}, {model['num_layers']} layers x {data['heads']} heads, on "
             f"{Path(str(treebank['path'])).name} ({treebank['sentences_scored']} sentences, "
             f"{treebank['words_scored']} words). Layers and heads count from 1.")
    legend = ('<p class="legend">Arcs above the words: <i style="background:#1a7f37"></i>a dependent of the relation '
              'finds its gold head <i style="background:#cf222e"></i>misses it <i style="background:#8c959f"></i>'
              "other words; thicker and darker: more attention. dep\u2192head: from each word to the word it "
              "attends to most; head\u2192dep: from the word that attends to it most. Bar under each word: its "
              "share of attention to special tokens. Dashed below: the relation's gold arcs, to the head.</p>")
    sections = [
        f'<section id="heads" aria-labelledby="heads-title"><h2 id="heads-title">Heads by relation</h2>'
        f"<p>Accuracy of every head at predicting each word's syntactic head (Clark et al. 2019, section 4). "
        f"Click a cell, or Tab to a map and press Enter (arrow keys move), to see that head in sentences.</p>"
        f"{_heatmaps(data)}</section>",
        '<section id="detail" aria-live="polite" aria-labelledby="detail-title"><h2 id="detail-title">Head</h2>'
        f'<p id="detail-accuracy"></p><div id="detail-noop"></div>{legend}<div id="detail-views" class="views"></div>'
        "</section>",
        _noop_section(noop),
        _leaderboard_section(probe, noop, others),
        _surface_section(surface),
    ]
    anchors = [("heads", "Heads"), ("detail", "Sentence views")] + ([("noop", "No-op test")] if noop else []) \
        + [("tables", "Tables")] + ([("surface", "Surface")] if surface else [])
    nav = " ".join(f'<a href="#{anchor}">{text}</a>' for anchor, text in anchors)
    footer = f"<footer>Made by <code>{html.escape(command)}</code>.</footer>" if command else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{HTML_STYLE}{PAGE_STYLE}</style>\n</head>\n<body>\n"
        f"<header><h1>{html.escape(title)}</h1><p>{html.escape(facts)}</p><nav>{nav}</nav></header>\n<main>\n"
        + "\n".join(section for section in sections if section)
        + f"\n</main>\n{footer}\n"
        f'<script type="application/json" id="page-data">{payload}</script>\n'
        f"<script>{SORT_SCRIPT}</script>\n<script>{PAGE_SCRIPT}</script>\n</body>\n</html>\n"
    )


__all__ = ["render_page", "page_data", "sentence_block", "heatmap_colour", "TARGETS"]
