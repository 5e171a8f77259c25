(function(){
var DATA=JSON.parse(document.getElementById('page-data').textContent);
var NS='http://www.w3.org/2000/svg';
var COLOURS={correct:'#1a7f37',wrong:'#cf222e',other:'#8c959f'};
function escapeHtml(s){return String(s).replace(/[&<>"']/g,function(c){return '&#'+c.charCodeAt(0)+';';});}
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
  return '<tr><td>'+escapeHtml(r)+'</td><td>'+v(groups[0],'special')+'</td><td>'+v(groups[1],'special')+'</td><td>'+v(groups[0],'punctuation')+'</td><td>'+v(groups[1],'punctuation')+'</td></tr>';});
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
function fromHash(){var hash;try{hash=decodeURIComponent(location.hash);}catch(e){return null;}
 var m=/^#head=(.+):(dep_to_head|head_to_dep):(\d+)-(\d+)$/.exec(hash);
 if(!m)return null;return document.querySelector('td.cell[data-relation="'+CSS.escape(m[1])+'"][data-direction="'+m[2]+'"][data-layer="'+(m[3]-1)+'"][data-head="'+(m[4]-1)+'"]');}
var start=fromHash()||document.querySelector('td.cell.chosen')||cells[0];if(start){focusCell(start);show(start);}
window.addEventListener('hashchange',function(){var c=fromHash();if(c){focusCell(c);show(c);}});
})();
